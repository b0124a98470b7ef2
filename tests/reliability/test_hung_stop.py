"""Round 3, item 8: a run whose env hangs still stops within a bounded, documented time.

SIGTERM asks for a graceful stop at the iteration boundary; an iteration that does not end
within the stop grace (`RLP_STOP_GRACE_S`) is ended by a forced exit (one line, exit 143, the
last checkpoint kept), and so is a second SIGTERM. The handler logic runs in-process with fake
timers and exits; one real `rlp train` whose env's `step()` never returns proves the forced
exit unwinds a real hung run (it runs beside the suite, tests/background.py).
"""

import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from rl_platform.run.signals import DUPLICATE_WINDOW_S, FORCE_EXIT_MARGIN_S, StopRequest
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
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

GRACE_S = 2.0


@dataclass
class Recorder:
    """Stands in for `_thread.interrupt_main` and `os._exit`."""

    interrupts: list[int]
    exits: list[int]
    exited: threading.Event

    @classmethod
    def new(cls) -> "Recorder":
        return cls([], [], threading.Event())

    def exit(self, code: int) -> None:
        self.exits.append(code)
        self.exited.set()

    def stop_request(self, *, grace_s: float) -> StopRequest:
        return StopRequest(
            grace_s=grace_s,
            last_checkpoint=lambda: "iter_000007",
            interrupt_main=self.interrupts.append,
            exit_process=self.exit,
            margin_s=0.05,
        )


def test_a_second_sigterm_exits_at_once_with_143_and_names_the_checkpoint(caplog_loguru):
    recorder = Recorder.new()
    stop = recorder.stop_request(grace_s=60)
    stop._handle(signal.SIGTERM, None)
    assert stop.requested and recorder.interrupts == []
    stop._first_at -= DUPLICATE_WINDOW_S * 2  # the repeat comes later than a duplicate would
    with pytest.raises(SystemExit) as raised:
        stop._handle(signal.SIGTERM, None)
    assert raised.value.code == 143
    assert any("SIGTERM received twice" in m and "iter_000007" in m for m in caplog_loguru)
    assert recorder.exited.wait(5) and recorder.exits == [143]  # the backstop, if unwinding hangs
    stop.restore()


def test_an_iteration_that_outlives_the_grace_is_ended_by_a_forced_exit(caplog_loguru):
    recorder = Recorder.new()
    stop = recorder.stop_request(grace_s=0.05)
    stop._handle(signal.SIGTERM, None)
    wait_for(lambda: recorder.interrupts, timeout_s=5, what="the grace to expire", poll_s=0.01)
    assert recorder.interrupts == [signal.SIGTERM]
    with pytest.raises(SystemExit) as raised:  # the main thread's handler, on the interrupt
        stop._handle(signal.SIGTERM, None)
    assert raised.value.code == 143
    assert any("did not stop within RLP_STOP_GRACE_S=0.05 s" in m for m in caplog_loguru)
    assert recorder.exited.wait(5) and set(recorder.exits) == {143}
    stop.restore()


def test_a_run_that_stops_in_time_is_never_forced():
    recorder = Recorder.new()
    stop = recorder.stop_request(grace_s=0.2)
    stop._handle(signal.SIGINT, None)
    stop.restore()  # the loop saved its final checkpoint and returned
    time.sleep(0.4)
    assert recorder.interrupts == [] and recorder.exits == []


@pytest.fixture
def caplog_loguru():
    from loguru import logger

    messages: list[str] = []
    handle = logger.add(lambda message: messages.append(str(message)), level="INFO")
    yield messages
    logger.remove(handle)


# A long run whose env hangs in iteration 2 (after step 300; iteration 1 is 200 steps and is
# checkpointed), so only a forced exit can end it.
HUNG_RUN = [
    *TINY,
    "stop.iterations=1000",
    "checkpoint.every_iterations=1",
    "env.id=tests.reliability.faulty_envs:HangingCartPole",
    "env.kwargs.hang_after=300",
]


@dataclass(frozen=True)
class Stopped:
    run_dir: Path
    returncode: int
    stop_s: float
    output: str


def _stop_a_hung_run(tmp: Path, env: dict[str, str]) -> Stopped:
    env = {**env, "RLP_STOP_GRACE_S": f"{GRACE_S:g}"}
    args = [str(CARTPOLE), "--profile", "smoke", *sets(HUNG_RUN)]
    with reaped(TrainProcess.start(args, out_dir=tmp / "runs", log_dir=tmp, env=env)) as process:
        run_dir = process.wait_for_iterations(1)
        sent = time.monotonic()
        os.kill(process.proc.pid, signal.SIGTERM)
        returncode = process.wait(timeout_s=GRACE_S + FORCE_EXIT_MARGIN_S + 30)
        return Stopped(run_dir, returncode, time.monotonic() - sent, process.output)


HUNG_STOP = Scenario.run_once("hung_stop", _stop_a_hung_run)
BACKGROUND = [HUNG_STOP]


def test_sigterm_ends_a_run_whose_env_hangs_within_the_grace_keeping_its_checkpoint(
    background: Background,
):
    stopped = background.result(HUNG_STOP)
    assert stopped.returncode == 143, stopped.output[-3000:]
    # Within the grace, plus the unwinding allowed before os._exit, plus polling slack.
    assert stopped.stop_s < GRACE_S + FORCE_EXIT_MARGIN_S + 3, stopped.stop_s
    assert "did not stop within RLP_STOP_GRACE_S=2 s" in stopped.output
    assert "Traceback" not in stopped.output
    store = CheckpointStore(stopped.run_dir / "checkpoints")
    assert store.latest().name == "iter_000001"
    assert load_checkpoint(store.latest()).meta["iteration"] == 1
    assert [int(row["iteration"]) for row in read_metrics(stopped.run_dir)] == [1]
