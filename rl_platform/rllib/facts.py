"""The facts of one run, resolved once from its spec: what every consumer reads instead of
asking again (`run_facts(spec)`).

Before this object, each layer derived what it needed from `spec.env` and `spec.model` on its
own: whether the env is multi-agent (10 calls in 8 files), its spaces (a throwaway env per
question), which module is trained, the seeds of env copies and learners, and where the
lifetime env-step count lives. Tianshou and Sample Factory resolve such things once and hand the
result down; here each process entry (`rlp train`, a seed's or a search trial's Tune worker,
the config builder for a caller with the spec alone) calls `run_facts(spec)` once and hands the
object, or the one fact needed, to what it calls. The few places that cannot be handed it
(an extension, a model type's `rl_module` factory) are listed with their reason in
`tests/unit/test_run_facts.py` (`RUN_FACTS_LOOKUPS`) and docs/architecture.md; a later call with
the same spec, in the same process, returns the same object.

Where each fact comes from (its one derivation):

| fact | home |
|---|---|
| env kind, vectorized core | `envs.env_info.env_facts` (the spec's validators read it too) |
| per-agent spaces | `envs.registry.agent_spaces`, one built env (lazily, once) |
| trained module ids | `module_ids.trained_module_ids`; in a checkpoint, `trained_module_in` |
| model capabilities | the model type's class (`spec.model_type.ModelTypeSpec`) |
| seeds | `seed_tree.SeedTree` |
| lifetime env steps | `lifetime_steps` |

An adapter file: the spaces come from the env as RLlib builds it (wrappers included), so this
module reaches Ray through `envs.registry`.
"""

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from rl_platform.base.lifetime_steps import NUM_ENV_STEPS_SAMPLED_LIFETIME, lifetime_env_steps
from rl_platform.base.module_ids import trained_module_ids
from rl_platform.base.seed_tree import SEED_KEY, SeedTree
from rl_platform.env_adapters.registry import agent_spaces
from rl_platform.envs.env_info import EnvFacts, EnvKind
from rl_platform.nets.action_mask_space import is_action_mask_space
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.model_type import OpponentHistoryInputs
from rl_platform.spec.sections import EnvSpec

_CACHE_SIZE = 32
"""Specs remembered per process (a test session builds many; a run needs one)."""


@dataclass(frozen=True)
class ModelCapabilities:
    """What the model type declares about itself (rl_platform/spec/model_type.py)."""

    stateful: bool
    """Carries a recurrent state: multi-agent runs keep a state lookback across cut episodes."""
    opponent_history: OpponentHistoryInputs | None
    """The opponent-history window it reads instead of the raw observation, if any."""
    opponent_actions_key: str | None
    """The spec key asking for the opponent's actions (array runner only), if any."""

    @property
    def reads_history(self) -> bool:
        return self.opponent_history is not None


@dataclass(frozen=True)
class RunFacts:
    """One run's resolved facts (module docstring). Spaces are read on first use: most
    commands never need them, and reading them builds one env."""

    env: EnvFacts
    env_spec: EnvSpec
    """The `env:` block the spaces are read from (wrappers and kwargs as RLlib gets them)."""
    trained_module_ids: tuple[str, ...]
    """The module this run trains: `main` in multi-agent envs, else `default_policy`. A
    league trains its exploiters beside `main` (`rl_platform.league.league.learner_ids_for`)."""
    model: ModelCapabilities
    seeds: SeedTree
    """The run's seed tree (`seed:`): learners, league, evaluation episodes."""
    env_seeds: SeedTree
    """The env copies' seed tree: `env.kwargs.seed`, else the run's seed. The array runner
    seeds its games from it; RLlib's runner passes `env.kwargs` and seeds copies itself from
    `seed:` (`debugging(seed=...)`)."""
    lifetime_env_steps_key: str = NUM_ENV_STEPS_SAMPLED_LIFETIME
    """RLlib's result key of the lifetime env-step count (read by `lifetime_env_steps`)."""

    @property
    def env_kind(self) -> EnvKind:
        return self.env.kind

    @property
    def multi_agent(self) -> bool:
        return self.env.multi_agent

    @functools.cached_property
    def agent_spaces(self) -> dict[str, tuple[gym.Space, gym.Space]]:
        """Each agent's (observation, action) space, agents sorted."""
        env = self.env_spec
        return agent_spaces(env.id, env.wrappers, env.kwargs, multi_agent=self.multi_agent)

    @property
    def observation_spaces(self) -> list[gym.Space]:
        return [observation for observation, _ in self.agent_spaces.values()]

    @property
    def trained_action_space(self) -> gym.Space:
        """The action space of the trained module's seat (the first agent; in the two-player
        games every seat has the same space)."""
        return next(iter(self.agent_spaces.values()))[1]

    @property
    def masks_actions(self) -> bool:
        """The env observes RLlib's action-masking Dict, so the model must read the mask."""
        return any(is_action_mask_space(space) for space in self.observation_spaces)

    def lifetime_env_steps(self, result: Mapping[str, Any]) -> int:
        """The lifetime env-step count of an iteration's result
        (`rl_platform.base.lifetime_steps`)."""
        return lifetime_env_steps(result)


def _resolve(spec: ExperimentSpec) -> RunFacts:
    env = spec.env.facts()
    model = spec.model
    return RunFacts(
        env=env,
        env_spec=spec.env,
        trained_module_ids=trained_module_ids(multi_agent=env.multi_agent),
        model=ModelCapabilities(
            stateful=model.stateful,
            opponent_history=model.opponent_history(),
            opponent_actions_key=model.opponent_actions_key(),
        ),
        seeds=SeedTree(spec.seed),
        env_seeds=SeedTree(spec.env.kwargs.get(SEED_KEY, spec.seed)),
    )


_FACTS: dict[str, RunFacts] = {}


def run_facts(spec: ExperimentSpec) -> RunFacts:
    """The facts of `spec`, resolved on the first call for a spec with this content and
    returned from memory after that (frozen specs: equal JSON, equal facts)."""
    key = spec.model_dump_json()
    facts = _FACTS.get(key)
    if facts is None:
        if len(_FACTS) >= _CACHE_SIZE:
            _FACTS.pop(next(iter(_FACTS)))
        facts = _FACTS[key] = _resolve(spec)
    return facts
