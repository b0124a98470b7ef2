"""How the console entry point ends (rl_platform/ray_runtime/process_exit.py), without Ray: the exit
code, the fallback to a normal exit while a non-daemon thread runs, and the flush before the
hard exit. The real command's end, Ray included, is tests/integration/test_console_output.py."""

import sys
import threading

import pytest

from rl_platform.ray_runtime import process_exit
from rl_platform.ray_runtime.process_exit import exit_code_of, exit_now


def test_exit_code_of_system_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code_of(None) == 0
    assert exit_code_of(3) == 3
    assert exit_code_of("bad thing") == 1
    assert capsys.readouterr().err == "bad thing\n"


def test_ends_at_once_with_the_code_after_exit_handlers_and_flushing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps: list[str] = []
    # the suite's own helper threads (tests/background.py) must not decide this case
    monkeypatch.setattr(process_exit, "_other_threads_that_block_exit", list)
    monkeypatch.setattr(sys.stdout, "flush", lambda: steps.append("flush out"))
    monkeypatch.setattr(sys.stderr, "flush", lambda: steps.append("flush err"))
    exit_now(
        2,
        run_exit_handlers=lambda: steps.append("atexit"),
        hard_exit=lambda code: steps.append(f"exit {code}"),
    )
    assert steps == ["atexit", "flush out", "flush err", "exit 2"]


def test_a_running_non_daemon_thread_gets_a_normal_exit() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    ended: list[int] = []
    try:
        with pytest.raises(SystemExit) as exited:
            exit_now(4, run_exit_handlers=lambda: ended.append(-1), hard_exit=ended.append)
    finally:
        release.set()
        worker.join()
    assert exited.value.code == 4
    assert ended == []
