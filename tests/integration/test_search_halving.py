"""A real synchronous successive-halving search on CartPole (scheduler `halving`): 4 trials on
2 CPUs, so trials pause at each rung while the others catch up, and the winners resume from
the checkpoint they took at the rung. A smaller search interrupted while a trial waits at
its rung resumes with it still waiting."""

import os
import signal
from itertools import pairwise

import pytest

from rl_platform import load_spec
from rl_platform.search.folder import trial_results
from rl_platform.search.results import read_results_csv
from rl_platform.search.tuner import resume_search, run_search
from tests.conftest import EXPERIMENTS

SPEC = EXPERIMENTS / "search" / "cartpole_ppo_asha.yaml"
BATCH, GRACE, MAX_T = 500, 500, 2000
# Rungs at 500 and 1000 env steps (500 * 2**2 is max_t): 4 trials -> 2 -> 1.
OVERRIDES = [
    f"training.train_batch_size={BATCH}",
    "logging.wandb=off",
    "logging.tensorboard=false",
    "checkpoint.every_iterations=1000",  # only the rung checkpoints and the one at the stop
    "search.searcher.seed=0",
    "search.num_samples=4",
    "search.scheduler.type=halving",
    "search.max_concurrent=null",  # halving: the 2 CPUs decide how many run at once
    f"search.scheduler.grace_period={GRACE}",
    "search.scheduler.reduction_factor=2",
    f"stop.env_steps={MAX_T}",
]
# RLlib samples a few env steps past the batch size now and then.
SLACK = 0.05


@pytest.fixture(scope="module")
def search(ray_local, tmp_path_factory):
    spec = load_spec(SPEC, overrides=OVERRIDES)
    outcome = run_search(spec, out_dir=tmp_path_factory.mktemp("halving"))
    return outcome, read_results_csv(outcome.search_dir / "results.csv")


def test_every_trial_of_the_cohort_finishes(search):
    outcome, rows = search
    assert not outcome.interrupted and len(rows) == 4
    assert sorted(row["status"] for row in rows) == ["completed"] + ["early_stopped"] * 3


def test_half_stop_at_each_rung_and_the_last_one_runs_to_max_t(search):
    _, rows = search
    steps = sorted(int(row["env_steps"]) for row in rows)
    assert GRACE <= steps[0] <= steps[1] < 2 * GRACE  # rung 0: 2 of 4 stopped
    assert 2 * GRACE <= steps[2] < MAX_T  # rung 1: 1 of 2 stopped
    assert MAX_T <= steps[3] <= MAX_T * (1 + SLACK)  # the winner ran to max_t
    # 2 x 500 + 1 x 1000 + 1 x 2000 = 4000 in all, against 4 x 2000 with every trial run to
    # max_t; a winner restarted from 0 after its pause would add its rung's steps again
    assert 4000 <= sum(steps) <= 4000 * (1 + SLACK)


def test_paused_winners_resume_from_their_rung_checkpoint(search):
    outcome, rows = search
    restores = 0
    for row in rows:
        results = trial_results(outcome.search_dir / f"trial_{row['trial_id']}")
        # Restarted from 0, a trial would report iteration 1 and ~500 env steps again after its
        # pause; resumed from its rung checkpoint, it counts on by one batch per iteration.
        assert [r["iteration"] for r in results] == list(range(1, len(results) + 1))
        env_steps = [r["env_steps"] for r in results]
        steps_per_iteration = [b - a for a, b in pairwise([0, *env_steps])]
        assert all(BATCH <= n <= BATCH * (1 + SLACK) for n in steps_per_iteration), env_steps
        assert env_steps[-1] == int(row["env_steps"])
        # Tune counts iterations since the trial's last restore
        restores += sum(r["iterations_since_restore"] == 1 for r in results[1:])
    # Of rung 0's two winners only the one whose result completed the rung went on unpaused.
    assert restores >= 1
    winner = next(row for row in rows if row["status"] == "completed")
    assert int(winner["iterations"]) == MAX_T // BATCH


class _InterruptWhenOneWaits:
    """Sends Tune's graceful-stop signal (as Ctrl+C does) once a trial waits at its rung: the
    rung needs all 3 trials and only 2 run at once, so it cannot be decided by then."""

    def __init__(self) -> None:
        self.sent = False

    def __call__(self, rows) -> None:
        if not self.sent and any(row.status == "paused" for row in rows):
            self.sent = True
            os.kill(os.getpid(), signal.SIGUSR1)


@pytest.fixture(scope="module")
def resumed(ray_local, tmp_path_factory):
    """3 trials, one rung at 500 env steps below max_t 1000 (factor 3: 1 goes on), stopped
    while a trial waits at the rung, then resumed."""
    shrink = ["search.num_samples=3", "search.scheduler.reduction_factor=3", "stop.env_steps=1000"]
    spec = load_spec(SPEC, overrides=[*OVERRIDES, *shrink])
    out = tmp_path_factory.mktemp("halving_resume")
    first = run_search(spec, out_dir=out, observer=_InterruptWhenOneWaits())
    return first, resume_search(first.search_dir)


def test_a_resumed_search_keeps_waiting_trials_paused_until_their_rung_is_decided(resumed):
    first, second = resumed
    waiting = {row.trial_id: row.env_steps for row in first.rows if row.status == "paused"}
    assert first.interrupted and waiting
    assert all(GRACE <= steps < 2 * GRACE for steps in waiting.values())
    assert not second.interrupted
    assert sorted(row.status for row in second.rows) == ["completed"] + ["early_stopped"] * 2
    for row in second.rows:
        if row.trial_id not in waiting:
            continue  # one still starting when stopped may have begun again from 0
        results = trial_results(second.search_dir / f"trial_{row.trial_id}")
        # no iteration run twice: it did not train on while its rung was undecided
        assert [r["iteration"] for r in results] == list(range(1, len(results) + 1))
        if row.status == "early_stopped":
            assert row.env_steps == waiting[row.trial_id]
    # 3 x 500 + 1 x 500, as without the interruption
    assert 2000 <= sum(row.env_steps for row in second.rows) <= 2000 * (1 + SLACK)
