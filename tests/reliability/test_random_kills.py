"""SIGKILL `rlp train` at 20 random moments of one run, `--resume` after each, and the files at
the end are what an uninterrupted run of the same spec writes (`test_kill_points.py` compares
the same way and covers the exact write moments in the default suite).

`slow`: about 20 process starts (3-4 minutes on 2 cores); run with
`uv run pytest -m slow tests/reliability/test_random_kills.py`."""

import random
import time

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.reliability.support import (
    CARTPOLE,
    TINY,
    TrainProcess,
    only_run_dir,
    read_metrics,
    reaped,
    sets,
    wait_for,
)
from tests.reliability.test_kill_points import _files

KILLS = 20
RUN = [
    *TINY,
    "stop.iterations=150",
    "checkpoint.every_iterations=1",
    "checkpoint.keep_last=200",
    "evaluation.every_env_steps=600",
    "evaluation.episodes=2",
    "evaluation.parallel=2",
]
ARGS = [str(CARTPOLE), "--profile", "smoke", *sets(RUN)]


def _kill_at_random(args: list[str], out, log_dir, rng: random.Random, *, first: bool) -> bool:
    """Start `rlp train`, SIGKILL it (and its Ray) at a random moment; False if it finished."""
    process = TrainProcess.start(args, out_dir=out, log_dir=log_dir)
    with reaped(process):
        if first:  # a run killed before its first checkpoint cannot be resumed, by design
            wait_for(
                lambda: process.run_dir() and read_metrics(process.run_dir()),
                timeout_s=300,
                what="the first iteration",
            )
        deadline = time.monotonic() + rng.uniform(0.5 if first else 4.0, 9.0)
        while time.monotonic() < deadline and process.proc.poll() is None:
            time.sleep(0.05)
        if process.proc.poll() is not None:
            return False
        process.kill_tree()
    return True


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_twenty_random_kills_then_resume_give_the_uninterrupted_files(ray_local, tmp_path):
    reference_out = tmp_path / "reference"
    result = CliRunner().invoke(app, ["train", *ARGS, "--out", str(reference_out)])
    assert result.exit_code == 0, result.output
    expected = _files(only_run_dir(reference_out))

    rng = random.Random(20261127)
    out = tmp_path / "killed"
    kills = 0
    while kills < KILLS:
        run_dir = only_run_dir(out)
        args = ARGS if run_dir is None else [*ARGS, "--resume", str(run_dir)]
        if not _kill_at_random(args, out, tmp_path / "logs", rng, first=run_dir is None):
            break  # the run finished before this moment came
        kills += 1
        store = CheckpointStore(only_run_dir(out) / "checkpoints")
        for folder in store.complete_checkpoints():
            load_checkpoint(folder)  # every visible checkpoint verifies after every kill
    run_dir = only_run_dir(out)
    result = CliRunner().invoke(app, ["train", *ARGS, "--resume", str(run_dir)])
    assert result.exit_code == 0, result.output
    assert kills >= KILLS // 2, f"only {kills} kills landed before the run finished"
    assert _files(run_dir) == expected
