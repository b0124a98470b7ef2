"""benchmarks/plain_torch_recipe.py (parts in benchmarks/plain_recipe/), the plain-torch
yardstick of the reference recipe, at tiny sizes on CPU (no Ray). `benchmarks` is a package at
the repository root, as `uv run python -m benchmarks.plain_torch_recipe` runs it.

The captured mode's CUDA graphs need a GPU; here its layout runs without them: acting over all
games with one state buffer per snapshot slot, fixed-length sequences with resets, and the
minibatch step with no host read."""

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
from benchmarks.plain_recipe.acting import CapturedActing, EagerActing
from benchmarks.plain_recipe.batch import STATE_IN, Sequences, prepare_batch, prepare_fixed_batch
from benchmarks.plain_recipe.captured_update import CapturedUpdate
from benchmarks.plain_recipe.config import RecipeConfig, config_from_args, parse_args
from benchmarks.plain_recipe.learning import ppo_loss
from benchmarks.plain_recipe.net import build_net, rows_of
from benchmarks.plain_recipe.opponents import OpponentPool
from benchmarks.plain_recipe.rollout import Rollout
from benchmarks.plain_recipe.sampling import RecipeSampler
from tests.conftest import REPO_ROOT

TINY = ["--device", "cpu", "--layers", "2", "--d-model", "16", "--heads", "2", "--lstm", "16"]
TINY += ["--history", "8", "--num-games", "8", "--rollout", "8", "--minibatch", "32"]
TINY += ["--epochs", "2", "--threads", "1", "--env-steps", "192"]  # 3 iterations of 64
LOGP_TOL = 1e-4
SOURCES = [REPO_ROOT / "benchmarks" / "plain_torch_recipe.py"]
SOURCES += sorted((REPO_ROOT / "benchmarks" / "plain_recipe").glob("*.py"))
# The RLlib adapters; `ray` itself is checked by name. rl_platform.league is not listed: the
# net's own import of rl_platform.spec.model runs rl_platform/spec/__init__.py, which loads its
# pydantic schema (league.spec); the benchmark never imports it itself
# (`test_the_benchmark_names_no_ray_sampling_or_league_module`).
ADAPTERS = ("rl_platform.rllib.config", "rl_platform.rllib.league_callback")
ADAPTERS += ("rl_platform.modules.recurrent_module", "rl_platform.modules.transformer_lstm_module")
ADAPTERS += ("rl_platform.env_runner.vector_env_runner",)


def _config(**changes) -> RecipeConfig:
    return dataclasses.replace(config_from_args(parse_args(TINY)), **changes)


def _self_play_only(config: RecipeConfig) -> RecipeConfig:
    league = config.league.model_copy(update={"opponent_mix": {"self_play": 1.0}})
    return dataclasses.replace(config, league=league)


def test_the_command_prints_rates_and_writes_its_json(tmp_path, capsys) -> None:
    out = tmp_path / "result.json"
    recipe.main([*TINY, "--json", str(out)])
    printed = capsys.readouterr().out
    assert "env steps/s" in printed and "sample" in printed and "SGD" in printed
    assert "vs based" in printed and "vs self_play" in printed and "vs constant" in printed
    result = json.loads(out.read_text())
    assert result["iterations"] == 3 and result["env_steps"] == 192
    assert result["mode"] == "eager"
    assert result["config"]["model"]["layers"] == 2
    assert result["config"]["training"]["lr"] == 2e-4  # the rest is the recipe's
    assert result["mix"] == pytest.approx({"based": 0.8, "self_play": 0.15, "constant": 0.05})
    assert not list(tmp_path.glob(".*.tmp"))  # written through a temp file


@pytest.mark.parametrize("captured", [False, True], ids=["eager", "captured-layout"])
def test_a_run_with_game_ends_is_fast_consistent_and_finite(captured: bool) -> None:
    # Games of 5 frames end (and restart) inside every 8-frame fragment; a snapshot is frozen
    # after each iteration, so self_play games meet the mirror, then 1 and 2 snapshots.
    config = _config(duel_settings={"max_steps": 5}, snapshot_every=64, captured=captured)
    result = recipe.run(config)
    assert result["mode"] == ("captured" if captured else "eager")
    assert result["env_steps_per_s"] > 0 and result["steady_env_steps_per_s"] > 0
    assert result["sample_s"] + result["learn_s"] <= result["wall_s"]
    assert 0 < result["sample_pct"] < 100 and 0 < result["prep_pct_of_learn"] < 100
    assert sum(result["games"].values()) > 0
    for row in result["history"]:
        assert all(math.isfinite(value) for value in row.values())
    assert result["first_max_abs_logratio"] < LOGP_TOL


def test_the_opponent_mix_follows_the_recipe_schedule() -> None:
    config = _config(num_games=4000)
    torch.manual_seed(0)
    pool = OpponentPool(config, main=build_net(config), rng=np.random.default_rng(0))
    assert pool.classes == ["based", "self_play", "constant"]
    shares = np.bincount(pool.kind, minlength=3) / config.num_games
    assert shares == pytest.approx([0.8, 0.15, 0.05], abs=0.03)
    pool.set_env_steps(1_800_000)  # halfway through the recipe's linear blend
    assert pool.mix == config.league.mix_at(1_800_000)
    assert pool.mix == pytest.approx({"based": 0.475, "self_play": 0.475, "constant": 0.05})
    pool.draw(np.arange(config.num_games))
    shares = np.bincount(pool.kind, minlength=3) / config.num_games
    assert shares == pytest.approx([0.475, 0.475, 0.05], abs=0.03)
    # Nothing frozen: self_play games mirror main; then the ring fills and wraps.
    assert [net for _, net, _ in pool.network_groups()] == [pool.main]
    for _ in range(pool.slots + 1):
        pool.freeze()
    pool.draw(np.arange(config.num_games))
    groups = pool.network_groups()
    assert [slot for slot, _, _ in groups] == list(range(pool.slots))
    assert [net for _, net, _ in groups] == pool.snapshots


def _acted(config: RecipeConfig, acting_class: type, *, gain: float = 3000.0):
    """Two fragments of a net whose logits depend strongly on the state (the actor's output
    starts at gain 0.01, which hides any state error in near-uniform logits). Snapshots of two
    different weights are frozen first, so self_play games meet both."""
    torch.manual_seed(0)
    net = build_net(config)
    with torch.no_grad():
        net.actor.out.weight.mul_(gain)
    initial = net.initial_state()
    pool = OpponentPool(config, main=net, rng=np.random.default_rng(1))
    for _ in range(2):
        pool.freeze()
        with torch.no_grad():
            net.actor.out.bias.add_(1.0)
    pool.draw(np.arange(config.num_games))
    if acting_class is CapturedActing:
        acting = CapturedActing(config, initial, slots=pool.slots)
    else:
        acting = EagerActing(config, initial)
    sampler = RecipeSampler(config, opponents=pool, acting=acting)
    rollout = Rollout.allocate(config, initial)
    for _ in range(2):  # the second fragment starts from states carried over
        sampler.collect(net, rollout)
    return net, initial, rollout, pool, acting


@pytest.mark.parametrize("truncate", [False, True], ids=["terminated", "truncated"])
@pytest.mark.parametrize("captured", [False, True], ids=["padded", "fixed-with-resets"])
def test_the_learner_replays_the_states_the_actor_had(truncate: bool, captured: bool) -> None:
    # History 3: the key/value cache (2 entries) fills and slides within a game of 6 frames.
    model = _config().model.model_copy(update={"history": 3})
    settings = {"max_steps": 6, "truncate_on_timeout": truncate}
    config = _config(model=model, duel_settings=settings, captured=captured)
    acting_class = CapturedActing if captured else EagerActing
    net, initial, rollout, _, _ = _acted(config, acting_class)
    ended = rollout.truncated if truncate else rollout.terminated
    assert ended.any() and not rollout.done[:, 0].all()
    prepare = prepare_fixed_batch if captured else prepare_batch
    batch = prepare(net, rollout, initial, config)
    rows = batch["obs"].shape[0]
    assert rows == config.num_games if captured else rows > config.num_games  # cut at game ends
    # Controls, bookkeeping bugs the check must see: every row from the initial state; and,
    # fixed, no episode starts inside a row.
    fresh = {k: v for k, v in batch.items() if not k.startswith(STATE_IN)}
    fresh |= {STATE_IN + k: v for k, v in rows_of(initial, rows).items()}
    controls = [fresh]
    if captured:
        controls.append(batch | {"resets": torch.zeros_like(batch["resets"])})
    with torch.no_grad():
        assert float(ppo_loss(net, batch, config)["max_abs_logratio"]) < LOGP_TOL
        for control in controls:
            assert float(ppo_loss(net, control, config)["max_abs_logratio"]) > 100 * LOGP_TOL


def test_captured_acting_plays_what_eager_acting_plays() -> None:
    # A near-greedy policy (gain 1e5): both draw the same actions despite different random
    # streams, so the games, main's states and each game's opponent state must agree.
    config = _self_play_only(_config(duel_settings={"max_steps": 5}))
    runs = [_acted(config, cls, gain=1e5) for cls in (EagerActing, CapturedActing)]
    (_, _, eager, pool, eager_acting), (_, _, captured, _, captured_acting) = runs
    assert torch.equal(eager.actions, captured.actions) and torch.equal(eager.obs, captured.obs)
    torch.testing.assert_close(eager.logp, captured.logp)
    assert len(set(pool.slot.tolist())) == 2  # both snapshots in play
    for key, value in eager_acting.main_state.items():
        torch.testing.assert_close(captured_acting.main_state[key], value)
        for game, slot in enumerate(pool.slot):
            opponent = captured_acting.states[1 + slot][key][game]
            torch.testing.assert_close(opponent, eager_acting.opponent_state[key][game])


def test_the_captured_step_reads_nothing_on_the_host(monkeypatch) -> None:
    config = _config(duel_settings={"max_steps": 5}, captured=True)
    net, initial, rollout, _, _ = _acted(config, CapturedActing, gain=1.0)
    update = CapturedUpdate(net, config)
    update.load(prepare_fixed_batch(net, rollout, initial, config))
    index = torch.randperm(config.num_games)[: config.num_games // 2]

    def host_read(*args, **kwargs):
        raise AssertionError("a host read inside the minibatch step")

    for name in ("item", "__bool__", "cpu", "numpy", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, host_read)
    out = update.backward(index)  # Adam's step on the CPU is not capturable's: left out
    monkeypatch.undo()
    assert out.shape == (6,) and bool(torch.isfinite(out).all())
    assert all(p.grad is not None for p in net.parameters() if p.requires_grad)


def test_fragments_are_cut_after_game_ends() -> None:
    done = np.zeros((4, 2), bool)
    done[1, 0] = True  # game 0 ends at frame 1, game 1 runs through
    sequences = Sequences.cut(done, torch.device("cpu"))
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
    imported = []
    for source in SOURCES:
        tree = ast.parse(source.read_text())
        imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names]  # fmt: skip
        imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    forbidden = ("ray", "rl_platform.sampling", "rl_platform.league", *ADAPTERS)
    assert [
        name for name in imported if name.split(".")[0] == "ray" or name.startswith(forbidden)
    ] == []


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
@pytest.mark.parametrize("flags", [["--device", "cuda"], ["--captured"]])
def test_cuda_modes_without_a_device_exit_2_with_one_line(flags: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(flags)
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_captured_on_the_cpu_exits_2_with_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        recipe.main(["--captured", "--device", "cpu"])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
