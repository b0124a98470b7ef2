"""Check 7 end to end for a league: a self-play `rlp train` SIGKILLed after iteration k's
checkpoint resumes with the exact league and algorithm state of checkpoint k.

The killed run is `rlp train` on `experiments/duel_selfplay.yaml` (smoke profile, shrunk
further: 300-step iterations, 50-frame games, a snapshot every iteration so the pool holds
frozen members, a checkpoint every iteration). It is killed in the case where restoring the
league matters: iteration k+1 has finished, so `league/league.json` already holds its games,
ratings and snapshot `main_v{k+1}`, but checkpoint k+1 is not written yet. That window is a
few milliseconds in a real run, so the child holds its k+1 save until the test has seen
`latest` name checkpoint k and the league folder at k+1, then gets a SIGKILL with its Ray.

The resume runs `rlp train --resume` in-process so a spy can read the league and the modules
right after the restore, before the first new iteration changes them.
"""

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.league import League, LeaguePool, LeagueSpec, routing
from rl_platform.league.members import MemberKind
from rl_platform.league.slots import module_id_for_slot
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.rllib.league_callback import LeagueCallback, _record_games, league_metrics
from rl_platform.storage.checkpoints import CheckpointStore, LoadedCheckpoint, load_checkpoint
from tests.background import Background, Scenario
from tests.reliability.support import (
    REPO,
    TrainProcess,
    child_env,
    read_metrics,
    reaped,
    sets,
    wait_for,
)
from tests.reliability.test_kill_and_resume import assert_tree_equal

DUEL = REPO / "experiments" / "duel_selfplay.yaml"
LEAGUE_TINY = [
    "logging.wandb=off",
    "logging.tensorboard=false",
    "training.train_batch_size=300",
    "training.minibatch_size=150",
    "training.num_epochs=1",
    "model.hidden=[16]",
    "env.envs_per_runner=2",
    "env.kwargs={max_steps: 50}",
    "resources.env_runners=0",  # the local env runner: league metrics must still appear
    "league.snapshot_every=1",
    "league.slots=2",
    "checkpoint.every_iterations=1",
    "checkpoint.keep_last=10",
]
KILL_AFTER = 2  # checkpoints; by then the pool holds main_v1 and main_v2
HOLD_ENV = "RLP_TEST_HOLD_SAVE_AT"
# `rlp train`, except that checkpoint saves from iteration $RLP_TEST_HOLD_SAVE_AT on wait for
# the SIGKILL (the entry point is the same Typer app the console script runs).
HELD_RLP = f"""
import os, sys, time
from rl_platform.storage.checkpoints import CheckpointStore
hold_at = int(os.environ["{HOLD_ENV}"])
save = CheckpointStore.save
def held_save(self, *, iteration, parts, meta):
    while iteration >= hold_at:
        time.sleep(0.1)
    return save(self, iteration=iteration, parts=parts, meta=meta)
CheckpointStore.save = held_save
from rl_platform.cli import app
sys.argv[0] = "rlp"
app()
"""
NEW_ITERATIONS = 2
ITER_NAME = re.compile(r"^iter_(\d+)$")


@dataclass(frozen=True)
class KilledLeagueRun:
    run_dir: Path
    checkpoint: LoadedCheckpoint  # checkpoint k, read before anything resumes
    rows_logged: int  # metrics lines the killed process wrote

    @property
    def k(self) -> int:
        return int(self.checkpoint.meta["iteration"])

    @property
    def league(self) -> dict[str, Any]:
        return self.checkpoint.parts["league"]


def _latest_iteration(run_dir: Path) -> int:
    pointer = run_dir / "checkpoints" / "latest"
    match = ITER_NAME.match(pointer.read_text().strip()) if pointer.is_file() else None
    return int(match.group(1)) if match else 0


def _league_iteration(run_dir: Path) -> int:
    manifest = run_dir / "league" / "league.json"
    return json.loads(manifest.read_text())["state"]["iteration"] if manifest.is_file() else 0


def _start_held(
    args: list[str], *, out_dir: Path, log_dir: Path, env: dict[str, str]
) -> TrainProcess:
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"rlp-{time.monotonic_ns()}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", HELD_RLP, "train", *args, "--out", str(out_dir)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env(env, **{HOLD_ENV: str(KILL_AFTER + 1)}),
            cwd=REPO,
            start_new_session=True,
        )
    return TrainProcess(proc, out_dir, log_path)


def _kill_with_the_league_ahead(tmp: Path, env: dict[str, str]) -> KilledLeagueRun:
    """Killed with `latest` = checkpoint k and the league folder one iteration ahead."""
    args = [str(DUEL), "--profile", "smoke", *sets([*LEAGUE_TINY, "stop.iterations=1000"])]
    with reaped(_start_held(args, out_dir=tmp / "runs", log_dir=tmp, env=env)) as process:

        def ahead() -> Path | None:
            assert process.proc.poll() is None, f"rlp train exited:\n{process.output[-3000:]}"
            run_dir = process.run_dir()
            done = run_dir and _league_iteration(run_dir) == KILL_AFTER + 1
            return run_dir if done else None

        # Checkpoint k+1 is held, so is its metrics row: a row is written after its
        # iteration's checkpoint, never for an iteration that no checkpoint holds.
        run_dir = wait_for(ahead, timeout_s=400, what=f"the league at iteration {KILL_AFTER + 1}")
        assert _latest_iteration(run_dir) == KILL_AFTER
        process.kill_tree()
        assert process.proc.returncode == -9, process.output[-2000:]
    latest = CheckpointStore(run_dir / "checkpoints").latest()
    return KilledLeagueRun(run_dir, load_checkpoint(latest), len(read_metrics(run_dir)))


# The killed child runs beside the rest of the suite (tests/background.py); the resume below
# runs in-process on the session Ray.
KILLED_LEAGUE = Scenario.run_once("league_kill_resume", _kill_with_the_league_ahead)
BACKGROUND = [KILLED_LEAGUE]


@pytest.fixture(scope="module")
def killed_league_run(background: Background) -> KilledLeagueRun:
    return background.result(KILLED_LEAGUE)


@dataclass
class RestoreSpy:
    """What the resumed run held right after `LeagueCallback.restore_parts`."""

    league: dict[str, Any] | None = None
    slots: list[str | None] | None = None
    slot_weights: dict[str, dict[str, np.ndarray]] | None = None
    pool_weights: dict[str, dict[str, np.ndarray]] | None = None
    learner_state: dict[str, Any] | None = None
    runner_plan: dict[str, Any] | None = None


def _spy_on_restore(monkeypatch: pytest.MonkeyPatch) -> RestoreSpy:
    spy = RestoreSpy()
    original = LeagueCallback.restore_parts

    def restore_parts(self: LeagueCallback, parts: Any, *, algorithm: Any) -> None:
        original(self, parts, algorithm=algorithm)
        league = self._driver_league()
        spy.league = league.state_dict()
        spy.slots = league.slots
        slot_ids = [module_id_for_slot(k) for k in range(len(league.slots))]
        spy.slot_weights = algorithm.learner_group.get_weights(module_ids=slot_ids)
        spy.pool_weights = {
            member_id: {n: t.numpy() for n, t in league.load_weights(member_id).items()}
            for member_id in league.slots
            if member_id is not None
        }
        spy.learner_state = algorithm.learner_group.get_state()["learner"]
        # num_env_runners=0: the env runner is in this process, so is its installed plan.
        runner = routing.current_plan()
        spy.runner_plan = None if runner is None else runner.plan.to_dict()

    monkeypatch.setattr(LeagueCallback, "restore_parts", restore_parts)
    return spy


@dataclass(frozen=True)
class ResumedLeagueRun:
    killed: KilledLeagueRun
    spy: RestoreSpy
    first_new: LoadedCheckpoint  # checkpoint k+1, written by the resumed process
    rows: list[dict[str, float]]


@pytest.fixture(scope="module")
def resumed(killed_league_run, ray_local) -> Iterator[ResumedLeagueRun]:
    killed = killed_league_run
    stop_at = killed.k + NEW_ITERATIONS
    args = ["train", str(DUEL), "--profile", "smoke"]
    args += sets([*LEAGUE_TINY, f"stop.iterations={stop_at}"])
    with pytest.MonkeyPatch.context() as patch:
        spy = _spy_on_restore(patch)
        result = CliRunner().invoke(app, [*args, "--resume", str(killed.run_dir)])
    assert result.exit_code == 0, result.output
    first_new = load_checkpoint(killed.run_dir / "checkpoints" / f"iter_{killed.k + 1:06d}")
    yield ResumedLeagueRun(killed, spy, first_new, read_metrics(killed.run_dir))


def test_the_killed_pool_has_no_half_registered_snapshot(killed_league_run):
    """Every registered frozen member has its complete weights file (hash checked)."""
    pool, state = LeaguePool.open(killed_league_run.run_dir / "league")  # read-only, no pruning
    frozen = [m for m in pool.members if m.is_frozen]
    assert {f"main_v{i}" for i in range(1, killed_league_run.k + 1)} <= {m.id for m in frozen}
    for member in frozen:
        assert pool.load_weights(member.id)  # raises IntegrityError on a missing/partial file
    # The league folder moved on past checkpoint k: restoring it on resume is not a no-op.
    k = killed_league_run.k
    assert state["iteration"] == k + 1 and f"main_v{k + 1}" in pool
    assert killed_league_run.rows_logged == k  # no row for the iteration without a checkpoint


def test_resumed_league_equals_checkpoint_k_right_after_restore(resumed):
    saved = resumed.killed.league
    spy = resumed.spy
    assert spy.league is not None, "the resumed run never restored the league part"
    # Members with ratings and games/wins/draws/losses, RNG state, slots, plan, result windows,
    # snapshot counters and iteration: exactly as saved, even if league.json had moved on.
    assert spy.league == saved
    assert spy.slots == saved["league"]["slots"] and any(spy.slots)
    # The env runner samples episodes from the restored plan.
    assert spy.runner_plan == saved["league"]["plan"]


def test_resumed_modules_equal_checkpoint_k(resumed):
    """main's weights and Adam moments, and every filled opponent slot, equal what was saved."""
    saved_algo = resumed.killed.checkpoint.parts[ALGORITHM_PART]
    saved_learner = saved_algo["learner_group"]["learner"]
    spy = resumed.spy
    weights = assert_tree_equal(spy.learner_state["rl_module"], saved_learner["rl_module"])
    moments = assert_tree_equal(spy.learner_state["optimizer"], saved_learner["optimizer"])
    assert weights >= 8 and moments >= 4  # the comparisons were not vacuous
    saved_modules = module_weights(saved_algo)
    filled = [(k, m) for k, m in enumerate(spy.slots) if m is not None]
    assert filled
    for k, member_id in filled:
        slot = module_id_for_slot(k)
        assert_tree_equal(spy.slot_weights[slot], spy.pool_weights[member_id], slot)
        assert_tree_equal(spy.slot_weights[slot], saved_modules[slot], slot)


def test_counters_continue_after_the_kill(resumed):
    k = resumed.killed.k
    saved_steps = resumed.killed.checkpoint.meta["env_steps"]
    rows = resumed.rows
    # Rows end at checkpoint k (the killed process wrote none beyond it), then k+1.. appended.
    assert [int(r["iteration"]) for r in rows] == list(range(1, k + NEW_ITERATIONS + 1))
    assert rows[k - 1]["env_steps"] == saved_steps
    assert saved_steps < rows[k]["env_steps"] < rows[k + 1]["env_steps"]
    assert resumed.first_new.meta["env_steps"] == rows[k]["env_steps"]
    assert "resumed from" in (resumed.killed.run_dir / "train.log").read_text()


def _members(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in state["members"]}


def test_first_new_checkpoint_continues_the_saved_league(resumed):
    """Unchanged parts carry over; the only change is iteration k+1's games and snapshot."""
    k, saved = resumed.killed.k, resumed.killed.league
    new = resumed.first_new.parts["league"]
    before, after = _members(saved), _members(new)
    assert set(after) == set(before) | {f"main_v{k + 1}"}  # numbering continues from k
    assert new["league"]["snapshot_counters"] == {"main": k + 1}
    assert new["league"]["iteration"] == k + 1
    for member_id, member in before.items():
        for field in ("kind", "parent_id", "created_at_step", "weights_file", "weights_sha256"):
            assert after[member_id][field] == member[field], (member_id, field)
    snapshot = after[f"main_v{k + 1}"]
    assert snapshot["created_at_step"] == resumed.rows[k]["env_steps"]
    # main's record grew by exactly the games iteration k+1 logged (none were mirror matches:
    # frozen members exist), so it continued from checkpoint k's record, not a later one.
    played = sum(v for key, v in resumed.rows[k].items() if key.startswith("league/games/"))
    assert played > 0
    assert after["main"]["games"] - before["main"]["games"] == played
    assert resumed.rows[k]["league/size"] == len(after)


def test_league_folder_after_resume_holds_exactly_the_registered_weights(resumed):
    root = resumed.killed.run_dir / "league"
    pool, _ = LeaguePool.open(root)
    frozen = {m.weights_file for m in pool.members if m.is_frozen}
    assert {p.name for p in (root / "weights").iterdir()} == frozen
    assert not [p for p in root.rglob("*") if p.name.startswith(".")]  # no temp leftovers
    for member in pool.members:
        if member.kind is MemberKind.SNAPSHOT:
            assert pool.load_weights(member.id)


def test_league_metrics_are_logged_with_the_local_env_runner(resumed):
    """num_env_runners=0: the league keys reach metrics.jsonl on every iteration."""
    for row in resumed.rows:
        assert {"league/rating/main", "league/size", "league/games_dropped"} <= set(row), row
        assert any(key.startswith("league/win_rate/") for key in row), row
    manifest = json.loads((resumed.killed.run_dir / "league" / "league.json").read_text())
    assert manifest["state"]["iteration"] == resumed.killed.k + NEW_ITERATIONS


def test_league_metrics_name_only_members_played_or_planned(tmp_path):
    """RLlib keeps reporting a games key once logged (NaN when idle): such members get none."""
    spec = LeagueSpec(scripted=["based", "constant"], opponent_mix={"based": 1.0}, slots=1)
    league = League(spec=spec, storage=tmp_path / "league", seed=0)
    league.plan_slots()
    games = {"main": {"main": {"win": float("nan")}, "constant": {"loss": 0.0, "win": 2.0}}}
    counts = _record_games(league, games)
    assert set(counts) == {"constant"}
    metrics = league_metrics(league, counts)
    assert {k for k in metrics if k.startswith("league/games/")} == {
        "league/games/constant",  # played this iteration
        "league/games/based",  # planned for the next one
    }
    assert metrics["league/games/constant"] == 2.0 and metrics["league/win_rate/constant"] == 1.0
    assert league.member("main").games == 2
