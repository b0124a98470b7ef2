"""A run's facts are resolved once from its spec, and the re-derivations they replace are gone.

Specs are validated (no Ray started); the spaces come from one env built without Ray.
"""

import ast
import re
from pathlib import Path

import gymnasium as gym
import pytest

from rl_platform.rllib.facts import run_facts
from rl_platform.spec import validate_spec_data

PACKAGE = Path(__file__).resolve().parents[2] / "rl_platform"


def _spec(env: dict, **top):
    return validate_spec_data({"name": "facts", "env": env, **top})


def test_a_gymnasium_env_is_single_agent_with_rllibs_default_module():
    facts = run_facts(_spec({"id": "CartPole-v1"}, seed=4))
    assert (facts.env_kind, facts.multi_agent) == ("single", False)
    assert facts.trained_module_ids == ("default_policy",)
    assert list(facts.agent_spaces) == ["agent"]
    assert facts.observation_spaces[0].shape == (4,)
    assert facts.trained_action_space == gym.spaces.Discrete(2)
    assert not facts.masks_actions
    assert not facts.model.stateful and not facts.model.reads_history
    assert (facts.seeds.root, facts.env_seeds.root) == (4, 4)


def test_the_duel_is_a_vector_game_trained_as_main():
    model = {"type": "transformer_lstm", "obs_split": {"self": [0, 32], "opponent": [32, 64]}}
    spec = _spec({"id": "rlp/Duel-v0", "kwargs": {"seed": 9}}, seed=2, model=model)
    facts = run_facts(spec)
    assert (facts.env_kind, facts.multi_agent) == ("vector_game", True)
    assert facts.env.vector_game == "rl_platform.envs.duel.vector_game:DuelVectorGame"
    assert facts.trained_module_ids == ("main",)
    assert list(facts.agent_spaces) == ["player_0", "player_1"]
    assert facts.model.stateful and facts.model.reads_history
    assert facts.model.opponent_history.obs_split == model["obs_split"]
    # The env's own seed roots the env copies; the run's seed everything else.
    assert (facts.seeds.root, facts.env_seeds.root) == (2, 9)


def test_connect_four_masks_actions():
    facts = run_facts(_spec({"id": "pettingzoo/connect_four_v3"}))
    assert facts.masks_actions and facts.env_kind == "vector_game"


@pytest.mark.parametrize(
    ("env_id", "kind", "agents"),
    [
        ("tests.fixtures.corridor_env:CorridorEnv", "single", ["agent"]),
        ("tests.fixtures.pennies_env:PenniesMultiAgentEnv", "multi_agent", None),
    ],
)
def test_a_users_entry_point(env_id, kind, agents):
    facts = run_facts(_spec({"id": env_id}))
    assert facts.env_kind == kind
    assert facts.trained_module_ids == (("main",) if facts.multi_agent else ("default_policy",))
    assert list(facts.agent_spaces) == (agents or sorted(facts.agent_spaces))
    assert len(facts.agent_spaces) == (1 if agents else 2)


def test_equal_specs_share_one_resolution():
    first = run_facts(_spec({"id": "CartPole-v1"}, seed=1))
    assert run_facts(_spec({"id": "CartPole-v1"}, seed=1)) is first
    assert run_facts(_spec({"id": "CartPole-v1"}, seed=2)) is not first


def _package_files() -> dict[str, str]:
    return {
        str(path.relative_to(PACKAGE)): path.read_text() for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_env_kind_is_derived_in_its_one_home():
    callers = [name for name, text in _package_files().items() if "is_multi_agent(" in text]
    assert callers == ["envs/env_info.py"]


def _seed_arithmetic(text: str) -> list[str]:
    """`+` and `*` with an operand named like a seed (`seed + i`, `settings.seed + 1000 * w`)."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
            names = [
                n.id if isinstance(n, ast.Name) else n.attr
                for n in ast.walk(node)
                if isinstance(n, ast.Name | ast.Attribute)
            ]
            if any("seed" in name.lower() for name in names):
                found.append(ast.unparse(node))
    return found


def test_seeds_are_derived_only_in_the_seed_tree():
    assert _seed_arithmetic("x = settings.seed + 1000 * worker") != []  # the check finds them
    derived = {
        name: found
        for name, text in _package_files().items()
        if name != "base/seed_tree.py" and (found := _seed_arithmetic(text))
    }
    assert derived == {}


_LIFETIME_READ = re.compile(
    r"(\.get|\.peek)\(\s*\(?[\w, ]*"
    r"(NUM_ENV_STEPS_SAMPLED_LIFETIME|\"num_env_steps_sampled_lifetime\")"
)


def test_lifetime_env_steps_are_read_in_one_place():
    assert _LIFETIME_READ.search(
        "metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME)"
    )
    assert _LIFETIME_READ.search('result.get("num_env_steps_sampled_lifetime", 0)')
    readers = [
        name
        for name, text in _package_files().items()
        if _LIFETIME_READ.search(text) or "peek(place" in text
    ]
    assert readers == ["base/lifetime_steps.py"]


ROOT = PACKAGE.parent
RUN_FACTS_LOOKUPS: dict[str, tuple[int, str]] = {
    # file: (its `run_facts(` calls, why it may look the facts up instead of being handed them)
    "rl_platform/run/train.py": (
        2,
        "two process entries: `rlp train` (`_check_before_any_file`) and one seed of "
        "`rlp train --seeds` (`train_in_folder`, in its Tune worker)",
    ),
    "rl_platform/search/trainable.py": (1, "a search trial's entry, in its Tune worker"),
    "rl_platform/rllib/config.py": (
        1,
        "the config builder's entry when its caller has the spec alone (tests, benchmarks); "
        "the run's entries pass `facts=`",
    ),
    "rl_platform/rllib/league_callback.py": (
        1,
        "`league_extension`: a `ConfigExtension` is handed (config, spec) alone, the protocol "
        "users' and tests' extensions share",
    ),
    "rl_platform/bc/extension.py": (1, "`bc_extension`: a `ConfigExtension`, as above"),
    "rl_platform/rllib/rl_module_spec.py": (
        1,
        "`mlp_module_spec`: a model type's `rl_module` factory is called with the spec alone "
        "(spec/model_type.py), by config building and by rebuilding a checkpoint's module",
    ),
    "benchmarks/eval_overhead.py": (1, "a benchmark's entry, building `PeriodicEvaluation`"),
}
"""Where `run_facts(spec)` is called (docs/architecture.md, "Run facts: handed down"). Every
other function is handed the facts, or the one fact it needs, by its caller."""


def _run_facts_calls() -> dict[str, int]:
    counts: dict[str, int] = {}
    for folder in ("rl_platform", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            relative = str(path.relative_to(ROOT))
            if relative == "rl_platform/rllib/facts.py":
                continue
            calls = sum(
                isinstance(node, ast.Call)
                and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
                == "run_facts"
                for node in ast.walk(ast.parse(path.read_text()))
            )
            if calls:
                counts[relative] = calls
    return counts


def test_run_facts_is_looked_up_only_where_listed() -> None:
    """A new look-up fails here: hand the facts down from the entry point instead, or add the
    site with its reason (and to docs/architecture.md)."""
    assert _run_facts_calls() == {name: count for name, (count, _) in RUN_FACTS_LOOKUPS.items()}
