"""Round 4, item 2: the embedded Ray's raylet or GCS lost under a running `rlp train`. The
raylet SIGKILLed: one `error:` line (once ~40 lines of the raylet's `[state-dump]` log and exit
1), exit 3, the checkpoints intact, and no Ray process of the run alive 10 s after `rlp` exits.
The GCS SIGKILLed under a run that samples in the driver: the run ends as it would have, and
again nothing of Ray is left (its agents once outlived it, waiting on the dead GCS). Real
`rlp train` runs in the background (tests/background.py).
"""

import contextlib
import importlib
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.background import Background, Scenario
from tests.reliability.support import CARTPOLE, TINY, TrainProcess, reaped, sets

RUN = [*TINY, "stop.env_steps=null", "checkpoint.every_iterations=1"]


@dataclass(frozen=True)
class LostRay:
    run_dir: Path
    returncode: int
    exit_s: float
    output: str
    alive_after_10_s: list[str]


def _kill_and_watch(tmp: Path, env: dict[str, str], *, process_name: str, iterations: int):
    psutil = importlib.import_module("psutil")  # bundled with Ray (support.py imports it)
    args = [str(CARTPOLE), *sets([*RUN, f"stop.iterations={iterations}"])]
    with reaped(TrainProcess.start(args, out_dir=tmp / "runs", log_dir=tmp, env=env)) as process:
        run_dir = process.wait_for_iterations(2)
        ray_processes = psutil.Process(process.proc.pid).children(recursive=True)
        [target] = [p for p in ray_processes if process_name in " ".join(p.cmdline())]
        target.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        returncode = process.wait(timeout_s=180)
        exit_s = time.monotonic() - killed
        time.sleep(10)
        alive = []
        for child in ray_processes:
            with contextlib.suppress(psutil.Error):
                if child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
                    alive.append(" ".join(child.cmdline())[:80])
        return LostRay(run_dir, returncode, exit_s, process.output, alive)


RAYLET_KILLED = Scenario.run_once(
    "raylet_killed",
    lambda tmp, env: _kill_and_watch(tmp, env, process_name="raylet/raylet", iterations=1000),
)
GCS_KILLED = Scenario.run_once(
    "gcs_killed",
    lambda tmp, env: _kill_and_watch(tmp, env, process_name="gcs_server", iterations=5),
)
BACKGROUND = [RAYLET_KILLED, GCS_KILLED]


def test_a_lost_raylet_is_one_line_and_leaves_no_ray_process(background: Background):
    lost = background.result(RAYLET_KILLED)
    assert lost.returncode == 3, lost.output[-3000:]
    assert lost.exit_s < 30, lost.exit_s
    errors = [line for line in lost.output.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and errors[0].startswith("error: this run's Ray lost its raylet")
    assert "[state-dump]" not in lost.output and "Traceback" not in lost.output
    assert lost.alive_after_10_s == []
    latest = CheckpointStore(lost.run_dir / "checkpoints").latest()
    assert latest is not None
    load_checkpoint(latest)  # intact
    assert "Raylet is terminated" in (lost.run_dir / "train.log").read_text()  # Ray's account


def test_a_lost_gcs_leaves_no_ray_process(background: Background):
    lost = background.result(GCS_KILLED)
    assert lost.returncode == 0, lost.output[-3000:]  # sampling in the driver needs no GCS
    assert lost.alive_after_10_s == []
    assert CheckpointStore(lost.run_dir / "checkpoints").latest().name == "iter_000005"
