"""The embedded local Ray losing its raylet mid-command: one line, and none of its processes left.

When the raylet dies (SIGKILL, the kernel's out-of-memory killer, a crash), Ray's agents publish
its last 20 log lines to the driver, which printed them as ~40 lines of `[state-dump]` under
"(raylet) Raylet is terminated ...", and the driver's core worker then ends the process with
exit 1. `watch_for_a_lost_raylet` catches that message where the driver prints it: Ray's
lines go to the run's log file (through Ray's logger), the console gets one `error:` line,
every Ray process this one started is killed, and the process ends with `TRAINING_STOPPED_EXIT`
(3, as a training stopped for a lost env runner; a checkpoint is atomic, so the last complete one
stays `latest`).

`kill_ray_descendants` is also how a stop leaves nothing behind: Ray's agents, whose
parent-death check waits on the GCS, outlived a GCS that had died first.
"""

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

import psutil  # bundled with Ray (on the path once `ray` is imported)

from rl_platform.base.errors import TRAINING_STOPPED_EXIT
from rl_platform.ray_runtime.ray_internals import LOST_RAYLET, handle_driver_prints

ray_logger = logging.getLogger("ray")
_RAYLET_LOST = "Raylet is terminated"
_RAY_MARKS = ("ray::", "/ray/", "raylet", "gcs_server")
"""How Ray's processes show in a command line: its workers' titles, its package's binaries
and scripts (a user's own child process elsewhere is left alone)."""
LOST_RAYLET_LINE = (
    "error: this run's Ray lost its raylet (Ray's node manager: killed, by SIGKILL or the "
    "kernel's out-of-memory killer, or crashed), so nothing can run any more; its processes "
    "are stopped, the last complete checkpoint is kept (resume with --resume RUN_DIR), and "
    "Ray's account is in the run's log"
)


def ray_descendants() -> list[psutil.Process]:
    """The processes below this one that belong to Ray (its GCS, raylet, agents, workers)."""
    found = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process().children(recursive=True):
            with contextlib.suppress(psutil.Error):
                text = " ".join(child.cmdline()) or child.name()
                if any(mark in text for mark in _RAY_MARKS):
                    found.append(child)
    return found


def kill_ray_descendants(
    processes: list[psutil.Process] | None = None, wait_s: float = 0.0
) -> None:
    """SIGKILL `processes` (default: `ray_descendants()`) still alive after `wait_s`."""
    processes = ray_descendants() if processes is None else processes
    if wait_s:
        _, processes = psutil.wait_procs(processes, timeout=wait_s)
    for process in processes:
        with contextlib.suppress(psutil.Error):
            process.send_signal(signal.SIGKILL)


def _raylet_lost(batch: dict[str, Any]) -> bool:
    lines = batch.get("lines") or []
    return batch.get("pid") == "raylet" and any(_RAYLET_LOST in str(line) for line in lines)


def _end_for_a_lost_raylet(batch: dict[str, Any]) -> None:
    # Through Ray's own logger: while a run is open (`logs.ray_logs_to`) to its log only.
    ray_logger.error("%s", "\n".join(map(str, batch.get("lines") or [])))
    for handler in ray_logger.handlers:
        handler.flush()
    sys.stderr.write(LOST_RAYLET_LINE + "\n")
    sys.stderr.flush()
    kill_ray_descendants()
    os._exit(TRAINING_STOPPED_EXIT)


def _guarded(printer: Callable[..., None]) -> Callable[..., None]:
    def print_batch(batch: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        if _raylet_lost(batch):
            _end_for_a_lost_raylet(batch)
        printer(batch, *args, **kwargs)

    return print_batch


def watch_for_a_lost_raylet() -> None:
    """After `ray.init` of a local Ray: the raylet's death message ends the process as the
    module docstring says. Ray's error listener prints it through the driver's printer,
    guarded here ahead of any other handler (`ray_internals.DRIVER_PRINT_HANDLERS`)."""
    handle_driver_prints(LOST_RAYLET, _guarded)
