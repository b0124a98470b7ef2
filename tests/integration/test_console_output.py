"""What a new user sees from a local `rlp train` (its own process, as they would run it): our
progress lines and the dashboard URL; Ray's routine notices go to the run's train.log; and no
process of its local Ray outlives it (the console script ends without Ray's slow shutdown,
rl_platform/ray_runtime/process_exit.py).

The `rlp train` child (a Ray start with its dashboard, imports, two tiny iterations: one core
for most of a minute) runs beside the rest of the suite (tests/background.py); its output is
read by tests/reliability/test_console_is_ours.py too (tests/console_run.py)."""

import os
import re
import time
from pathlib import Path

from benchmarks.common.processes import live_processes
from tests.background import Background
from tests.console_run import CONSOLE_RUN, MARKER

RAY_NOTICES = (
    "Token authentication is enabled",
    "is now ignored by default when packaging",
    "Ignoring upload to cluster",
    "Started a local Ray instance",
    "You are running PPO on the new API stack",
    "RLModule(config=[RLModuleConfig object])",
    "Install gputil",
    "Trainable.setup took",
)


def _processes_marked(marker: str) -> list[str]:
    """Command lines of the live processes whose environment carries `MARKER=marker`."""
    needle = f"{MARKER}={marker}".encode()
    marked = live_processes(lambda entry: needle in (entry / "environ").read_bytes().split(b"\0"))
    return [_command_line(entry) for entry in marked]


def _command_line(entry: Path) -> str:
    try:
        return (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:  # ended since it was found: still reported, it was alive then
        return f"pid {entry.name}"


LOCAL_TRAIN = CONSOLE_RUN  # shared with tests/reliability/test_console_is_ours.py
BACKGROUND = [LOCAL_TRAIN]


def test_local_train_shows_progress_and_dashboard_not_ray_notices(background: Background) -> None:
    run = background.result(LOCAL_TRAIN)
    result = run.result
    assert result.returncode == 0, result.stderr[-3000:]
    console = result.stdout + result.stderr
    assert "cartpole_ppo | iter 2 |" in console and "run folder:" in console
    assert re.search(r"Ray dashboard: http://127\.0\.0\.1:\d+", console)
    assert [notice for notice in RAY_NOTICES if notice in console] == []
    log = run.run_dir / "train.log"
    assert "You are running PPO on the new API stack" in log.read_text()  # kept, off screen


def test_no_process_of_the_local_ray_outlives_the_command(background: Background) -> None:
    run = background.result(LOCAL_TRAIN)
    assert run.result.returncode == 0, run.result.stderr[-3000:]
    if not Path(f"/proc/{os.getpid()}/environ").is_file():
        raise AssertionError("this check reads /proc (Linux); CI runs on Linux")
    deadline = time.monotonic() + 10.0  # SIGTERMs sent at exit, not waited for
    while (left := _processes_marked(run.marker)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], f"still running after the command ended: {left}"
