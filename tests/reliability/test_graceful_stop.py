"""Check 9: SIGTERM (`rlp jobs stop`, a scheduler) and SIGINT (Ctrl+C) finish the iteration,
write a complete final checkpoint within the stop budget and exit 0; resume continues there.

The two signals' `rlp train` children run at the same time: each is mostly a Ray start and
imports on one core, so together they take about as long as one did alone on 2 cores. They run
beside the rest of the suite (tests/background.py).
"""

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.utils.stop_grace import DEFAULT_STOP_GRACE_S
from tests.background import Background, Scenario
from tests.reliability.support import (
    CARTPOLE,
    TINY,
    TrainProcess,
    read_metrics,
    reaped,
    sets,
    wait_for,
)

# Long run, no periodic checkpoints: any checkpoint present must come from the signal.
LONG_RUN = [*TINY, "stop.iterations=1000", "checkpoint.every_iterations=1000"]
SIGNALS = [signal.SIGTERM, signal.SIGINT]


def _send(process: TrainProcess, sig: signal.Signals) -> None:
    if sig == signal.SIGINT:  # Ctrl+C: the terminal signals the whole foreground group
        os.killpg(process.proc.pid, sig)
    else:  # a scheduler or `ray job stop` signals the driver
        os.kill(process.proc.pid, sig)


@dataclass(frozen=True)
class Stopped:
    run_dir: Path
    returncode: int
    stop_s: float
    """From the signal to the exit."""
    output: str


def _stop_by_signals(tmp: Path, env: dict[str, str]) -> dict[signal.Signals, Stopped]:
    """One long `rlp train` per signal, both started at once; each gets its signal as soon as
    its first iteration is in metrics.jsonl, and must exit within the stop budget."""
    args = [str(CARTPOLE), "--profile", "smoke", *sets(LONG_RUN)]
    sent: dict[signal.Signals, float] = {}
    exited: dict[signal.Signals, float] = {}
    run_dirs: dict[signal.Signals, Path] = {}
    with contextlib.ExitStack() as stack:
        processes = {
            sig: stack.enter_context(
                reaped(
                    TrainProcess.start(args, out_dir=tmp / sig.name / "runs", log_dir=tmp, env=env)
                )
            )
            for sig in SIGNALS
        }

        def all_stopped() -> bool:
            for sig, process in processes.items():
                if sig not in sent:
                    assert process.proc.poll() is None, f"exited early:\n{process.output[-3000:]}"
                    run_dir = process.run_dir()
                    if run_dir is not None and read_metrics(run_dir):
                        run_dirs[sig] = run_dir
                        sent[sig] = time.monotonic()
                        _send(process, sig)
                elif sig not in exited:
                    if process.proc.poll() is not None:
                        exited[sig] = time.monotonic()
                    elif time.monotonic() - sent[sig] > DEFAULT_STOP_GRACE_S:
                        raise AssertionError(
                            f"rlp train still running {DEFAULT_STOP_GRACE_S:.0f} s after "
                            f"{sig.name}:\n{process.output[-3000:]}"
                        )
            return len(exited) == len(processes)

        wait_for(all_stopped, timeout_s=400 + DEFAULT_STOP_GRACE_S, what="both runs to stop")
        return {
            sig: Stopped(
                run_dir=run_dirs[sig],
                returncode=process.proc.returncode,
                stop_s=exited[sig] - sent[sig],
                output=process.output,
            )
            for sig, process in processes.items()
        }


# The children run beside the rest of the suite (tests/background.py); the resumes below run
# in-process on the session Ray.
STOPPED_BY_SIGNALS = Scenario.run_once("graceful_stop", _stop_by_signals)
BACKGROUND = [STOPPED_BY_SIGNALS]


@pytest.fixture(scope="module")
def stopped_runs(background: Background) -> dict[signal.Signals, Stopped]:
    return background.result(STOPPED_BY_SIGNALS)


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_signal_writes_a_final_checkpoint_within_budget_and_resume_continues(
    sig, stopped_runs, ray_local
):
    stopped = stopped_runs[sig]
    run_dir, output = stopped.run_dir, stopped.output
    assert stopped.returncode == 0, output[-3000:]
    assert stopped.stop_s < DEFAULT_STOP_GRACE_S
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
