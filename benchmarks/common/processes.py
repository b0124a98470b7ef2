"""Live processes on this machine (Linux /proc), and waiting for a finished contender's Ray to
be gone before the next one starts.

`rlp train` ends without waiting for its local Ray's processes (rl_platform/utils/
process_exit.py): they get a SIGTERM and stop within about a second, on the same 2 cores the
next contender starts on. A whole-process comparison waits for them, so neither side starts
beside the other's teardown. tests/integration/test_console_output.py finds a run's leftover
processes with `live_processes` too.
"""

import time
from collections.abc import Callable
from pathlib import Path

RAY_PROCESS_MARKS = (b"raylet", b"gcs_server", b"ray::", b"ray/dashboard", b"log_monitor.py")


def live_processes(matches: Callable[[Path], bool]) -> list[Path]:
    """The /proc folders of live processes for which `matches(folder)` holds (zombies have
    ended: only their parent has not reaped them; a process that ends meanwhile, or is not
    ours to read, is left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            if state != "Z" and matches(entry):
                found.append(entry)
        except OSError:
            continue
    return found


def _is_ray(entry: Path) -> bool:
    cmdline = (entry / "cmdline").read_bytes()
    return any(mark in cmdline for mark in RAY_PROCESS_MARKS)


def wait_until_ray_has_ended(timeout_s: float = 30.0) -> float:
    """Seconds waited until no Ray process (any session) is left, or `timeout_s` passed."""
    started = time.monotonic()
    while live_processes(_is_ray) and time.monotonic() - started < timeout_s:
        time.sleep(0.1)
    return time.monotonic() - started
