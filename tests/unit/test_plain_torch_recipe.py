"""benchmarks/plain_torch_recipe.py, the plain-torch yardstick of the reference recipe, at tiny
sizes on CPU (no Ray). `benchmarks` is a package at the repository root, as `uv run python -m
benchmarks.plain_torch_recipe` runs it."""

import ast
import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

import benchmarks.plain_torch_recipe as recipe
from tests.conftest import REPO_ROOT

TINY = ["--device", "cpu", "--layers", "2", "--d-model", "16", "--heads", "2", "--lstm", "16"]
TINY += ["--history", "8", "--num-games", "8", "--rollout", "8", "--minibatch", "32"]
TINY += ["--epochs", "2", "--threads", "1", "--env-steps", "192"]  # 3 iterations of 64
LOGP_TOL = 1e-4
# The RLlib adapters; `ray` itself is checked by name. rl_platform.league is not listed: the
# net's own import of rl_platform.spec.model runs rl_platform/spec/__init__.py, which loads its
# pydantic schema (league.spec); the benchmark never imports it itself
# (`test_the_benchmark_names_no_ray_sampling_or_league_module`).
ADAPTERS = ("rl_platform.rllib_config", "rl_platform.league.callback")
ADAPTERS += ("rl_platform.modules.recurrent_module", "rl_platform.modules.transformer_lstm_module")
ADAPTERS += ("rl_platform.sampling.vector_env_runner",)


def _config(**changes) -> recipe.RecipeConfig:
    return dataclasses.replace(recipe.config_from_args(recipe.parse_args(TINY)), **changes)


def test_the_command_prints_rates_and_writes_its_json(tmp_path, capsys) -> None:
    out = tmp_path / "result.json"
    recipe.main([*TINY, "--json", str(out)])
    printed = capsys.readouterr().out
    assert "env steps/s" in printed and "sample" in printed and "SGD" in printed
    result = json.loads(out.read_text())
    assert result["iterations"] == 3 and result["env_steps"] == 192
    assert result["config"]["model"]["layers"] == 2
    assert result["config"]["training"]["lr"] == 2e-4  # the rest is the recipe's
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temp file


def test_a_run_with_game_ends_is_fast_consistent_and_finite() -> None:
    # Games of 5 frames end (and restart) inside every 8-frame fragment.
    result = recipe.run(_config(duel_settings={"max_steps": 5}))
    assert result["env_steps_per_s"] > 0 and result["steady_env_steps_per_s"] > 0
    assert result["sample_s"] + result["learn_s"] <= result["wall_s"]
    assert 0 < result["sample_pct"] < 100 and 0 < result["prep_pct_of_learn"] < 100
    assert sum(result["games"].values()) > 0
    for row in result["history"]:
        assert all(math.isfinite(value) for value in row.values())
    assert result["first_max_abs_logratio"] < LOGP_TOL


def _acted_rollout(config: recipe.RecipeConfig):
    """Two fragments with a net whose logits depend strongly on the state (the actor's output
    starts at gain 0.01, which hides any state error in near-uniform logits)."""
    torch.manual_seed(0)
    net = recipe.build_net(config)
    with torch.no_grad():
        net.actor.out.weight.mul_(3000.0)
    initial = net.initial_state()
    sampler = recipe.RecipeSampler(config, initial)
    rollout = recipe.Rollout.allocate(config, initial)
    for _ in range(2):  # the second fragment starts from states carried over
        sampler.collect(net, net, rollout)
    return net, initial, rollout


@pytest.mark.parametrize("truncate", [False, True], ids=["terminated", "truncated"])
def test_the_learner_replays_the_states_the_actor_had(truncate: bool) -> None:
    # History 3: the key/value cache (2 entries) fills and slides within a game of 6 frames.
    model = _config().model.model_copy(update={"history": 3})
    settings = {"max_steps": 6, "truncate_on_timeout": truncate}
    config = _config(model=model, duel_settings=settings)
    net, initial, rollout = _acted_rollout(config)
    ended = rollout.truncated if truncate else rollout.terminated
    assert ended.any() and not (rollout.terminated | rollout.truncated)[:, 0].all()
    batch = recipe.prepare_batch(net, rollout, initial, config)
    assert batch["seq_lens"].shape[0] > config.num_games  # fragments were cut at game ends
    with torch.no_grad():
        replayed = recipe.ppo_loss(net, batch, config)["max_abs_logratio"]
        # Control: every sequence from the initial state, a bookkeeping bug the check must see.
        fresh = {k: v for k, v in batch.items() if not k.startswith(recipe.STATE_IN)}
        n = batch["seq_lens"].shape[0]
        fresh |= {recipe.STATE_IN + k: v for k, v in recipe.rows_of(initial, n).items()}
        forgotten = recipe.ppo_loss(net, fresh, config)["max_abs_logratio"]
    assert float(replayed) < LOGP_TOL
    assert float(forgotten) > 100 * LOGP_TOL


def test_fragments_are_cut_after_game_ends() -> None:
    done = np.zeros((4, 2), bool)
    done[1, 0] = True  # game 0 ends at frame 1, game 1 runs through
    sequences = recipe.Sequences.cut(done, torch.device("cpu"))
    assert sequences.lengths.tolist() == [2, 2, 4]
    assert sequences.first.tolist() == [0, 2]
    frames = torch.arange(8.0).view(4, 2)  # value = 2 * t + n
    assert sequences.pad(frames).tolist() == [[0, 2, 0, 0], [4, 6, 0, 0], [1, 3, 5, 7]]


def test_importing_the_benchmark_imports_no_ray() -> None:
    code = (
        "import benchmarks.plain_torch_recipe; "
        f"print([m for m in sys.modules if m.split('.')[0] == 'ray' or m in {ADAPTERS!r}])"
    )
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; {code}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,  # as `python -m benchmarks.plain_torch_recipe` runs from the root
    )
    assert out.stdout.strip() == "[]"


def test_the_benchmark_names_no_ray_sampling_or_league_module() -> None:
    tree = ast.parse((REPO_ROOT / "benchmarks" / "plain_torch_recipe.py").read_text())
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names]  # fmt: skip
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    forbidden = ("ray", "rl_platform.sampling", "rl_platform.league", *ADAPTERS)
    assert [
        name for name in imported if name.split(".")[0] == "ray" or name.startswith(forbidden)
    ] == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_cuda_without_a_device_exits_2(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--device", "cuda"])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
