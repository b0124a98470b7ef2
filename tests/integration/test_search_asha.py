"""Real Tune searches on CartPole: ASHA stops trials at rungs, best.yaml trains, an interrupted
search resumes without rerunning finished trials."""

import json
import os
import pickle
import signal
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform import load_spec, train
from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.search.budget import trial_budget
from rl_platform.search.results import read_results_csv
from rl_platform.search.tuner import run_search
from rl_platform.storage.checkpoints import META_FILE
from tests.conftest import EXPERIMENTS

SPEC = EXPERIMENTS / "search" / "cartpole_ppo_asha.yaml"
TINY = [
    "training.train_batch_size=500",
    "logging.wandb=off",
    "checkpoint.every_iterations=2",
    "search.searcher.seed=0",
]


def _spec(*overrides: str):
    return load_spec(SPEC, overrides=[*TINY, *overrides])


def _result_lines(search_dir: Path) -> dict[str, int]:
    return {
        d.name: len((d / "result.json").read_text().splitlines())
        for d in search_dir.glob("trial_*")
        if (d / "result.json").is_file()
    }


class _InterruptAfterFirstFinished:
    """Observer sending Tune's graceful-stop signal (as Ctrl+C does) once a trial has finished."""

    def __init__(self) -> None:
        self.statuses: set[str] = set()

    def __call__(self, rows) -> None:
        self.statuses |= {row.status for row in rows}
        if any(row.status in ("completed", "early_stopped") for row in rows):
            os.kill(os.getpid(), signal.SIGUSR1)


class _Payload:
    """Unpickling this creates `marker`."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture(scope="module")
def search(ray_local, tmp_path_factory):
    """One ASHA search of 6 trials sampled by Optuna's TPE, interrupted after the first
    finished trial, then resumed with `rlp search --resume`. One search keeps this file within
    a few minutes on 2 cores: the Optuna checks read it too, and the random searcher's state
    is resumed by test_search_halving.py."""
    spec = _spec(
        "search.searcher.type=optuna",
        "search.num_samples=6",
        "stop.env_steps=4500",
        "search.scheduler.grace_period=500",
    )
    observer = _InterruptAfterFirstFinished()
    first = run_search(spec, out_dir=tmp_path_factory.mktemp("asha"), observer=observer)
    before = {
        "outcome": first,
        "best_yaml": (first.search_dir / "best.yaml").exists(),
        "result_lines": _result_lines(first.search_dir),
        "statuses": observer.statuses,
    }
    # A payload planted where Tune unpickles from: the sealed copy replaces it on resume.
    marker = first.search_dir.parent / "payload_ran"
    (first.search_dir / "tuner.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    resumed = CliRunner().invoke(app, ["search", "--resume", str(first.search_dir), "--no-live"])
    assert resumed.exit_code == 0, resumed.output
    assert not marker.exists(), "the planted tuner.pkl was unpickled"
    rows = read_results_csv(first.search_dir / "results.csv")
    return spec, first.search_dir, before, rows


def test_interrupted_search_keeps_results_and_waits_for_resume(search):
    _, _, before, _ = search
    first = before["outcome"]
    assert first.interrupted and not before["best_yaml"]
    assert "running" in before["statuses"]  # the live observer saw trials while they ran
    finished = [r for r in first.rows if r.status in ("completed", "early_stopped")]
    assert 1 <= len(finished) < 6


def test_resume_finishes_the_search_without_rerunning_finished_trials(search):
    _, search_dir, before, rows = search
    assert len(rows) == 6
    assert {row["status"] for row in rows} <= {"completed", "early_stopped"}
    lines_after = _result_lines(search_dir)
    first = before["outcome"]
    finished = [r for r in first.rows if r.status in ("completed", "early_stopped")]
    for row in finished:  # same result count, same final numbers: not run again
        name = f"trial_{row.trial_id}"
        assert lines_after[name] == before["result_lines"][name]
        again = next(r for r in rows if r["trial_id"] == row.trial_id)
        assert (again["status"], int(again["env_steps"])) == (row.status, row.env_steps)
    # Every trial of the first run is still there; with `max_concurrent` holding the searcher to
    # 2 running trials, the ones it had not created yet are created by the resumed search.
    assert {row.trial_id for row in first.rows} <= {row["trial_id"] for row in rows}
    assert (search_dir / "best.yaml").is_file()


def test_asha_stops_some_trials_early_at_a_rung(search):
    spec, _, _, rows = search
    max_t = trial_budget(spec).max_t
    early = [row for row in rows if row["status"] == "early_stopped"]
    assert early and all(int(row["env_steps"]) < max_t for row in early)
    assert any(int(row["env_steps"]) >= max_t for row in rows)
    for row in rows:  # sampled values are in the space and recorded
        assert 3e-5 <= float(row["training.lr"]) <= 3e-3
        assert int(row["training.num_epochs"]) in (2, 6, 10)


def test_trials_log_tensorboard_and_checkpoint_in_our_format(search):
    _, search_dir, _, _ = search
    trial_dirs = sorted(search_dir.glob("trial_*"))
    assert len(trial_dirs) == 6
    assert all(list(d.glob("events.out.tfevents.*")) for d in trial_dirs)
    checkpoints = list(search_dir.glob(f"trial_*/checkpoint_*/{META_FILE}"))
    assert checkpoints and not list(search_dir.glob("trial_*/checkpoint_*/*.pkl"))
    last = json.loads((trial_dirs[0] / "result.json").read_text().splitlines()[-1])
    assert last["trial_status"] == "ok" and "train/episode_return_mean" in last


def test_best_yaml_is_a_plain_spec_that_trains(search, tmp_path):
    _, search_dir, _, rows = search
    best_yaml = search_dir / "best.yaml"
    best = load_spec(best_yaml)
    assert best.search is None
    best_id = best_yaml.read_text().splitlines()[0].split()[3].rstrip(":")
    best_row = next(row for row in rows if row["trial_id"] == best_id)
    assert best_row["status"] == "completed"
    completed = [float(r["train/episode_return_mean"]) for r in rows if r["status"] == "completed"]
    assert float(best_row["train/episode_return_mean"]) == max(completed)
    assert best.training.lr == pytest.approx(float(best_row["training.lr"]))
    assert best.training.num_epochs == int(best_row["training.num_epochs"])
    overrides = ["stop.iterations=1", "logging.tensorboard=false"]
    result = train(load_spec(best_yaml, overrides=overrides), out_dir=tmp_path)
    assert result.iterations == 1 and result.env_steps > 0


def test_optuna_searcher_without_optuna_says_how_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "optuna", None)  # as if the extra were not installed
    spec = _spec("search.searcher.type=optuna")
    with pytest.raises(UserError, match=r"uv sync --extra optuna"):
        run_search(spec, out_dir=tmp_path)
    assert not (tmp_path / "search").exists()


def test_optuna_searcher_runs_a_real_search(search):
    _, search_dir, _, rows = search
    assert len({row["training.lr"] for row in rows}) == 6  # TPE's startup samples differ
    for row in rows:
        assert 3e-5 <= float(row["training.lr"]) <= 3e-3
        assert int(row["training.minibatch_size"]) in (125, 250, 500)
        assert float(row["train/episode_return_mean"]) > 0 and int(row["env_steps"]) >= 500
    # Tune saved OptunaSearch's state (the random searcher saves basic-variant-state-*.json)
    assert list(search_dir.glob("searcher-state-*.pkl"))
    assert not list(search_dir.glob("basic-variant-state-*"))
    log = (search_dir / "search.log").read_text()
    assert f"tensorboard --logdir {search_dir}" in log
