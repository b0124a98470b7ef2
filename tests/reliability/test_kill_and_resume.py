"""Checks 5 (end to end), 7 and 8: a SIGKILLed `rlp train` resumes exactly from its last
complete checkpoint; restored weights, optimizer and league state equal what was saved; a
league state restored into a different member set is refused with the missing/extra ids."""

import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.league import League, LeagueMismatchError, LeagueSpec
from rl_platform.league.restore import restore_league
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, restore_algorithm
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.spec import load_spec
from rl_platform.storage.checkpoints import META_FILE, CheckpointStore, load_checkpoint
from tests.background import Background
from tests.league_support import sample_league_opponent
from tests.reliability.support import CARTPOLE, TINY, read_metrics, sets
from tests.reliability.test_kill_points import SCENARIOS


@dataclass(frozen=True)
class KilledRun:
    run_dir: Path
    iterations_logged: int


# The SIGKILLed `rlp train` (checkpointing every iteration, killed with half of row 4 written)
# is test_kill_points.py's: one child for both modules, run beside the suite.
KILLED = SCENARIOS["torn_metrics_row:4"]
BACKGROUND = [KILLED]


@pytest.fixture(scope="module")
def killed_run(background: Background) -> KilledRun:
    run_dir = background.result(KILLED)
    return KilledRun(run_dir=run_dir, iterations_logged=len(read_metrics(run_dir)))


def _resume_spec(stop_at: int):
    return load_spec(CARTPOLE, profile="smoke", overrides=[*TINY, f"stop.iterations={stop_at}"])


def test_sigkilled_run_leaves_only_complete_checkpoints_and_a_loadable_latest(killed_run):
    checkpoints = killed_run.run_dir / "checkpoints"
    store = CheckpointStore(checkpoints)
    latest = store.latest()
    assert latest is not None and (checkpoints / "latest").read_text() == f"{latest.name}\n"
    loaded = load_checkpoint(latest)
    # A checkpoint is written before its row: latest may be one iteration past the last row.
    assert 1 <= loaded.meta["iteration"] <= killed_run.iterations_logged + 1
    for folder in checkpoints.glob("iter_*"):
        assert (folder / META_FILE).is_file(), f"{folder} is incomplete but visible"
        load_checkpoint(folder)


def _to_numpy(value: Any) -> Any:
    return value.detach().cpu().numpy() if isinstance(value, torch.Tensor) else value


def assert_tree_equal(actual: Any, expected: Any, path: str = "") -> int:
    """Exact equality of nested state (arrays bitwise, NaN == NaN); returns arrays compared."""
    actual = _to_numpy(actual)
    if isinstance(expected, dict):
        assert isinstance(actual, dict), path
        assert set(actual) == set(expected), f"{path}: keys differ {set(actual) ^ set(expected)}"
        return sum(assert_tree_equal(actual[k], v, f"{path}/{k}") for k, v in expected.items())
    if isinstance(expected, list | tuple):
        assert isinstance(actual, list | tuple) and len(actual) == len(expected), path
        pairs = enumerate(zip(actual, expected, strict=True))
        return sum(assert_tree_equal(a, e, f"{path}/{i}") for i, (a, e) in pairs)
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray) and actual.dtype == expected.dtype, path
        np.testing.assert_array_equal(actual, expected, err_msg=path)
        return 1
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(actual, float) and math.isnan(actual), path
        return 0
    assert actual == expected, f"{path}: {actual!r} != {expected!r}"
    return 0


def test_restored_algorithm_state_equals_the_checkpoint(killed_run, ray_local):
    """Weights, optimizer moments and connector state after restore == the saved files."""
    checkpoint = load_checkpoint(CheckpointStore(killed_run.run_dir / "checkpoints").latest())
    saved = checkpoint.parts[ALGORITHM_PART]
    algo = build_algorithm_config(_resume_spec(1000)).build_algo()
    try:
        assert restore_algorithm(algo, checkpoint) == checkpoint.meta["iteration"]
        assert algo.iteration == checkpoint.meta["iteration"]
        state = algo.get_state()
        learner, saved_learner = (
            state["learner_group"]["learner"],
            saved["learner_group"]["learner"],
        )
        weights = assert_tree_equal(learner["rl_module"], saved_learner["rl_module"], "rl_module")
        moments = assert_tree_equal(learner["optimizer"], saved_learner["optimizer"], "optimizer")
        assert weights >= 4 and moments >= 4  # the comparisons above were not vacuous
        assert_tree_equal(state["env_runner"], saved["env_runner"], "env_runner")
        # The sampling module got the restored weights too (else the next iteration would
        # collect experience with a fresh random policy).
        (module_id,) = saved_learner["rl_module"]
        sampling = algo.env_runner.module.get_state()
        shared = set(sampling) & set(saved_learner["rl_module"][module_id])
        assert len(shared) >= 4
        for name in shared:
            np.testing.assert_array_equal(
                _to_numpy(sampling[name]), saved_learner["rl_module"][module_id][name], name
            )
    finally:
        algo.stop()


def test_rlp_train_resume_after_sigkill_continues_counters(killed_run, ray_local, tmp_path):
    run_dir = tmp_path / "run"  # a copy: test_kill_points.py resumes the killed run itself
    shutil.copytree(killed_run.run_dir, run_dir)
    checkpoint = load_checkpoint(CheckpointStore(run_dir / "checkpoints").latest())
    k, saved_steps = checkpoint.meta["iteration"], checkpoint.meta["env_steps"]
    args = [
        "train",
        str(CARTPOLE),
        "--profile",
        "smoke",
        *sets([*TINY, f"stop.iterations={k + 1}"]),
    ]
    result = CliRunner().invoke(app, [*args, "--resume", str(run_dir)])
    assert result.exit_code == 0, result.output

    rows = read_metrics(run_dir)
    # Lines logged after the checkpoint by the killed process were dropped, then k+1 appended.
    assert [int(r["iteration"]) for r in rows] == list(range(1, k + 2))
    assert rows[k - 1]["env_steps"] == saved_steps
    assert rows[k]["env_steps"] > saved_steps
    latest = load_checkpoint(CheckpointStore(run_dir / "checkpoints").latest())
    assert latest.meta["iteration"] == k + 1 and latest.meta["env_steps"] == rows[k]["env_steps"]
    assert "resumed from" in (run_dir / "train.log").read_text()


# ----- league state ----------------------------------------------------------------------------
def _weights(seed: int) -> dict[str, torch.Tensor]:
    return {"w": torch.randn(4, 3, generator=torch.Generator().manual_seed(seed))}


def _busy_league(root: Path) -> League:
    league = League(spec=LeagueSpec(scripted=["based"], slots=2), storage=root, seed=7)
    league.add_snapshot(learner_id="main", weights=_weights(1), env_steps=100)
    league.add_snapshot(learner_id="main", weights=_weights(2), env_steps=200)
    for outcome in ["win", "loss", "draw", "win"]:
        league.record_game(learner_id="main", opponent_id="main_v1", outcome=outcome)
    league.record_game(learner_id="main", opponent_id="based", outcome="loss")
    league.end_iteration(iteration=3, env_steps=300, get_weights=lambda _: _weights(5))
    return league


def _opponents(league: League, n: int = 25) -> list[str]:
    return [sample_league_opponent(league, "main").member_id for _ in range(n)]


def test_league_state_restored_from_a_checkpoint_equals_what_was_saved(tmp_path):
    root = tmp_path / "league"
    league = _busy_league(root)
    saved = league.state_dict()
    store = CheckpointStore(tmp_path / "checkpoints")
    store.save(iteration=3, parts={"league": saved}, meta={})
    expected_draws = _opponents(league)  # what the league does next from the saved state

    # The league folder moves on past the checkpoint, then the driver dies.
    league.add_snapshot(learner_id="main", weights=_weights(3), env_steps=400)
    league.record_game(learner_id="main", opponent_id="main_v3", outcome="win")
    league.save()
    del league

    resumed = League(spec=LeagueSpec(scripted=["based"], slots=2), storage=root, seed=7)
    assert "main_v3" in resumed.pool
    restored_from = load_checkpoint(store.latest()).parts["league"]
    assert restore_league(resumed, restored_from) == []
    assert resumed.state_dict() == saved
    assert "main_v3" not in resumed.pool
    assert _opponents(resumed) == expected_draws  # same RNG stream, slots and windows
    for member_id, seed in [("main_v1", 1), ("main_v2", 2)]:
        assert torch.equal(resumed.load_weights(member_id)["w"], _weights(seed)["w"])


def test_restoring_a_league_state_into_different_members_lists_missing_and_extra(tmp_path):
    saved = _busy_league(tmp_path / "a").state_dict()  # main, based, main_v1, main_v2
    other = League(spec=LeagueSpec(scripted=["based"], slots=2), storage=tmp_path / "b", seed=7)
    other.add_snapshot(learner_id="main", weights=_weights(1), env_steps=100)
    other.add_checkpoint(member_id="outside_policy", weights=_weights(9))
    before = other.state_dict()
    with pytest.raises(LeagueMismatchError) as info:
        other.load_state_dict(saved)
    assert info.value.missing == ["main_v2"]
    assert info.value.extra == ["outside_policy"]
    message = str(info.value)
    assert "missing" in message and "'main_v2'" in message
    assert "extra" in message and "'outside_policy'" in message
    assert isinstance(info.value, UserError)  # the CLI shows it without a traceback, exit 2
    assert other.state_dict() == before  # nothing was half-restored
