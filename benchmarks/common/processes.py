"""Waiting for a finished contender's Ray to be gone before the next one starts.

`rlp train` ends without waiting for its local Ray's processes (rl_platform/utils/
process_exit.py): they get a SIGTERM and stop within about a second, on the same 2 cores the
next contender starts on. A whole-process comparison waits for them, so neither side starts
beside the other's teardown.
"""

import time
from pathlib import Path

RAY_PROCESS_MARKS = (b"raylet", b"gcs_server", b"ray::", b"ray/dashboard", b"log_monitor.py")


def ray_processes() -> list[int]:
    """Process ids of live Ray processes on this machine (any session; Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # ended meanwhile
            continue
        if state != "Z" and any(mark in cmdline for mark in RAY_PROCESS_MARKS):
            found.append(int(entry.name))
    return found


def wait_until_ray_has_ended(timeout_s: float = 30.0) -> float:
    """Seconds waited until no Ray process is left (or `timeout_s` passed)."""
    started = time.monotonic()
    while ray_processes() and time.monotonic() - started < timeout_s:
        time.sleep(0.1)
    return time.monotonic() - started
