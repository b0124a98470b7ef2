"""Check 12: a search trial that fails once recovers from its checkpoint (`max_failures: 1`);
after a SIGKILLed search driver, `rlp search --resume` completes without rerunning the trials
that had finished.

The failing search runs in a child process with its own Ray. The failing trial's env is
registered with gymnasium in the driver and, through Ray's `worker_process_setup_hook`, in every
worker: a Tune trial runs in a worker process, which knows only the envs its own imports
register. (The hook is why it cannot use the session Ray: a job-level runtime_env there would
slow every worker start of the suite.) The killed search is a real `rlp search` child, SIGKILLed
with its Ray; its resume runs in-process on the session Ray.

Both searches' drivers run beside the rest of the suite (tests/background.py).
"""

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.search.folder import trial_results
from rl_platform.search.results import read_results_csv
from rl_platform.spec import load_spec
from tests.background import Background, Scenario
from tests.reliability.faulty_envs import FlakyCartPole, failure_count
from tests.reliability.support import REPO, RLP, TrainProcess, child_env, reaped, wait_for

FLAKY_ID = "RlpTestSearchFlaky-v0"
SETUP_HOOK = "tests.reliability.test_search_recovery.register_flaky_env"
ITERATION_STEPS = 200
# The driver of the failing search: registers the env here and in every Ray worker.
FAILING_DRIVER = f"""
import sys
import ray
from rl_platform.search.tuner import run_search
from rl_platform.spec import load_spec
from tests.reliability.test_search_recovery import register_flaky_env
register_flaky_env()
ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
         runtime_env={{"worker_process_setup_hook": "{SETUP_HOOK}"}})
run_search(load_spec(sys.argv[1]), out_dir=sys.argv[2])
"""


def _make_flaky(**config: Any) -> FlakyCartPole:
    return FlakyCartPole(dict(config))


def register_flaky_env() -> None:
    """Register the flaky CartPole with gymnasium (the driver, and Ray's worker setup hook)."""
    if FLAKY_ID not in gym.registry:
        gym.register(FLAKY_ID, entry_point=_make_flaky, max_episode_steps=500)


SPEC = """\
name: {name}
algo: PPO
seed: 0
env: {env}
training: {{train_batch_size: {steps}, minibatch_size: 100, num_epochs: 1}}
model: {{hidden: [16, 16]}}
stop: {{env_steps: {max_t}}}
checkpoint: {{every_iterations: 1, keep_last: 2}}
logging: {{wandb: off, tensorboard: false}}
health: {{min_entropy: null}}
search:
  params:
    training.lr: {{loguniform: [1.0e-4, 1.0e-3]}}
  num_samples: {samples}
  max_concurrent: 1
  scheduler: {{type: fifo}}
  searcher: {{type: random, seed: 0}}
"""


def _write_spec(path: Path, *, name: str, env: str, max_t: int, samples: int) -> Path:
    text = SPEC.format(name=name, env=env, steps=ITERATION_STEPS, max_t=max_t, samples=samples)
    path.write_text(text)
    return path


def _trial_states(search_dir: Path) -> dict[str, dict[str, Any]]:
    """trial id -> {status, num_failures} from Tune's latest experiment state on disk."""
    states = sorted(search_dir.glob("experiment_state-*.json"))
    if not states:
        return {}
    try:
        data = json.loads(states[-1].read_text())
    except (json.JSONDecodeError, OSError):  # being rewritten right now
        return {}
    out = {}
    for trial_json, runtime_json in data["trial_data"]:
        trial, runtime = json.loads(trial_json), json.loads(runtime_json)
        out[trial["trial_id"]] = {
            "status": trial["status"],
            "num_failures": runtime["num_failures"],
        }
    return out


# ----- a trial that fails once --------------------------------------------------------------
@dataclass(frozen=True)
class FailedOnce:
    search_dir: Path
    count_file: Path
    rows: list[dict[str, str]]
    console: str


def _fail_once(tmp: Path, env: dict[str, str]) -> FailedOnce:
    """One trial whose env raises once at env step 301 (iteration 2, after checkpoint 1)."""
    kwargs = {"count_file": str(tmp / "failures"), "fail_after": 300, "fail_times": 1}
    env_section = json.dumps({"id": FLAKY_ID, "envs_per_runner": 1, "kwargs": kwargs})
    spec_path = _write_spec(
        tmp / "spec.yaml", name="fails_once", env=env_section, max_t=800, samples=1
    )
    log_path = tmp / "driver.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-c", FAILING_DRIVER, str(spec_path), str(tmp / "runs")],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=child_env(env),
            cwd=REPO,
            start_new_session=True,
        )
    with reaped(TrainProcess(proc, tmp / "runs", log_path)) as process:
        returncode = process.wait(timeout_s=400)
    assert returncode == 0, process.output[-6000:]
    (search_dir,) = (tmp / "runs").glob("search/*/*/")
    rows = read_results_csv(search_dir / "results.csv")
    return FailedOnce(
        search_dir=search_dir, count_file=tmp / "failures", rows=rows, console=process.output
    )


@pytest.fixture(scope="module")
def failed_once(background: Background) -> FailedOnce:
    return background.result(FAILS_ONCE)


def test_a_trial_that_fails_once_is_restarted_and_terminates(failed_once):
    assert failure_count(failed_once.count_file) == 1  # the env really raised, once
    ((trial_id, state),) = _trial_states(failed_once.search_dir).items()
    assert state == {"status": "TERMINATED", "num_failures": 1}
    (row,) = failed_once.rows
    assert row["trial_id"] == trial_id and row["status"] == "completed"
    assert int(row["env_steps"]) >= 800


def test_the_trials_env_error_stays_off_the_console(failed_once):
    """Round 4, item 5: Tune's "Trial task failed" and the env's traceback go to the search's
    log, not the console."""
    assert "Traceback" not in failed_once.console, failed_once.console[-3000:]
    assert "Trial task failed" not in failed_once.console
    log = (failed_once.search_dir / "search.log").read_text()
    assert "Traceback" in log


def test_the_restarted_trial_continues_from_its_checkpoint_not_from_zero(failed_once):
    (trial_dir,) = failed_once.search_dir.glob("trial_*")
    results = trial_results(trial_dir)
    iterations = [int(r["iteration"]) for r in results]
    steps = [int(r["env_steps"]) for r in results]
    # Iteration 1 before the failure (in iteration 2), then 2.. restored from checkpoint 1:
    # a restart from zero would report iteration 1 again and lose the env steps.
    assert iterations == list(range(1, len(iterations) + 1)) and len(iterations) >= 4
    assert steps == sorted(steps) and len(set(steps)) == len(steps)
    assert steps[1] >= ITERATION_STEPS + ITERATION_STEPS // 2  # iteration 2 counts on


# ----- a SIGKILLed search driver ------------------------------------------------------------
@dataclass(frozen=True)
class KilledDriver:
    search_dir: Path
    finished: dict[str, list[dict[str, Any]]]
    """Trials TERMINATED at the kill -> their result.json lines then."""
    trial_dirs: set[str]


@dataclass(frozen=True)
class KilledSearch(KilledDriver):
    resumed: Any
    """`rlp search --resume`'s CliRunner result."""


def _start_search(
    spec_path: Path, out_dir: Path, log_path: Path, env: dict[str, str]
) -> TrainProcess:
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [str(RLP), "search", str(spec_path), "--out", str(out_dir), "--no-live"],
            stdout=log,
            stderr=subprocess.STDOUT,
            # Tune saves its experiment state at most every 10 s by default; every second here
            # lets the test see the first TERMINATED trial (and kill) sooner.
            env=child_env(env, TUNE_GLOBAL_CHECKPOINT_S="1"),
            cwd=REPO,
            start_new_session=True,
        )
    return TrainProcess(proc, out_dir, log_path)


def _finished_trials(process: TrainProcess) -> tuple[Path, set[str]] | None:
    assert process.proc.poll() is None, f"rlp search ended early:\n{process.output[-3000:]}"
    found = list(process.out_dir.glob("search/*/*/"))
    if not found:
        return None
    states = _trial_states(found[0])
    done = {tid for tid, state in states.items() if state["status"] == "TERMINATED"}
    return (found[0], done) if done else None


def _kill_the_driver(tmp: Path, env: dict[str, str]) -> KilledDriver:
    """`rlp search` of 3 trials, one at a time, SIGKILLed (with its Ray) once one finished."""
    env_section = json.dumps({"id": "CartPole-v1", "envs_per_runner": 1})
    spec_path = _write_spec(tmp / "spec.yaml", name="killed", env=env_section, max_t=600, samples=3)
    with reaped(_start_search(spec_path, tmp / "runs", tmp / "search.log", env)) as process:
        search_dir, done = wait_for(
            lambda: _finished_trials(process), timeout_s=300, what="a TERMINATED trial"
        )
        process.kill_tree()
    finished = {tid: trial_results(search_dir / f"trial_{tid}") for tid in done}
    trial_dirs = {p.name for p in search_dir.glob("trial_*")}
    return KilledDriver(search_dir, finished, trial_dirs)


# Both searches' drivers are child processes with a Ray of their own: they run beside the rest
# of the suite (tests/background.py). The resume runs in-process on the session Ray.
FAILS_ONCE = Scenario.run_once("search_fails_once", _fail_once)
KILLED_DRIVER = Scenario.run_once("search_killed_driver", _kill_the_driver)
BACKGROUND = [FAILS_ONCE, KILLED_DRIVER]


@pytest.fixture(scope="module")
def killed_search(background: Background, ray_local) -> KilledSearch:
    """The killed search, then `rlp search --resume` in-process (no second Ray start)."""
    killed = background.result(KILLED_DRIVER)
    args = ["search", "--resume", str(killed.search_dir), "--no-live"]
    resumed = CliRunner().invoke(app, args)
    return KilledSearch(killed.search_dir, killed.finished, killed.trial_dirs, resumed)


def test_resume_after_a_killed_driver_completes_every_trial(killed_search):
    resumed = killed_search.resumed
    assert resumed.exit_code == 0, (resumed.output[-3000:], resumed.exception)
    assert 1 <= len(killed_search.finished) < 3  # the kill left work for the resume
    rows = read_results_csv(killed_search.search_dir / "results.csv")
    assert len(rows) == 3 and {row["status"] for row in rows} == {"completed"}
    assert load_spec(killed_search.search_dir / "best.yaml").search is None


def test_resume_does_not_rerun_trials_finished_before_the_kill(killed_search):
    search_dir = killed_search.search_dir
    rows = {row["trial_id"]: row for row in read_results_csv(search_dir / "results.csv")}
    for trial_id, before in killed_search.finished.items():
        after = trial_results(search_dir / f"trial_{trial_id}")
        assert after == before, f"trial {trial_id} reported again after the resume"
        assert int(rows[trial_id]["env_steps"]) == int(before[-1]["env_steps"])
        assert int(rows[trial_id]["iterations"]) == int(before[-1]["iteration"])
    # no second folder for any trial: one per trial id, the same ones as before the kill
    trial_dirs = {p.name for p in search_dir.glob("trial_*")}
    assert trial_dirs == {f"trial_{tid}" for tid in rows}
    assert killed_search.trial_dirs <= trial_dirs
