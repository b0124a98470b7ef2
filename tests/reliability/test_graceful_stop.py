"""Check 9: SIGTERM (`rlp jobs stop`, a scheduler) and SIGINT (Ctrl+C) finish the iteration,
write a complete final checkpoint within the stop budget and exit 0; resume continues there."""

import os
import signal
import time

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.jobs.runtime_env import DEFAULT_STOP_GRACE_S
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.reliability.support import CARTPOLE, TINY, TrainProcess, read_metrics, reaped, sets

# Long run, no periodic checkpoints: any checkpoint present must come from the signal.
LONG_RUN = [*TINY, "stop.iterations=1000", "checkpoint.every_iterations=1000"]


def _send(process: TrainProcess, sig: signal.Signals) -> None:
    if sig == signal.SIGINT:  # Ctrl+C: the terminal signals the whole foreground group
        os.killpg(process.proc.pid, sig)
    else:  # a scheduler or `ray job stop` signals the driver
        os.kill(process.proc.pid, sig)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
def test_signal_writes_a_final_checkpoint_within_budget_and_resume_continues(
    sig, tmp_path, request
):
    args = [str(CARTPOLE), "--profile", "smoke", *sets(LONG_RUN)]
    with reaped(TrainProcess.start(args, out_dir=tmp_path / "runs", log_dir=tmp_path)) as process:
        run_dir = process.wait_for_iterations(1)
        sent = time.monotonic()
        _send(process, sig)
        returncode = process.wait(timeout_s=DEFAULT_STOP_GRACE_S)
        stop_s = time.monotonic() - sent
        output = process.output
    assert returncode == 0, output[-3000:]
    assert stop_s < DEFAULT_STOP_GRACE_S
    assert f"{sig.name} received" in output and f"stopped: signal {sig.name}" in output
    assert "Traceback" not in output

    rows = read_metrics(run_dir)
    store = CheckpointStore(run_dir / "checkpoints")
    assert [p.name for p in store.complete_checkpoints()] == [store.latest().name]
    checkpoint = load_checkpoint(store.latest())
    k = checkpoint.meta["iteration"]
    assert k == int(rows[-1]["iteration"]) and k < 1000
    assert checkpoint.meta["env_steps"] == rows[-1]["env_steps"]
    assert (run_dir / "trial_metrics.json").is_file()

    resume = [
        "train",
        str(CARTPOLE),
        "--profile",
        "smoke",
        *sets([*TINY, f"stop.iterations={k + 1}"]),
    ]
    result = CliRunner().invoke(app, [*resume, "--resume", str(run_dir)])
    assert result.exit_code == 0, result.output
    rows = read_metrics(run_dir)
    assert [int(r["iteration"]) for r in rows] == list(range(1, k + 2))
    assert rows[-1]["env_steps"] > checkpoint.meta["env_steps"]
    assert load_checkpoint(store.latest()).meta["iteration"] == k + 1
