"""Paths whose names are not UTF-8, and an error boundary that never raises (#59, round 5).

Under `LC_ALL=C` Python keeps a byte like `\\xff` in a name as a lone surrogate (PEP 383). Ray
encodes the working folder and the command line as UTF-8 and failed on it (exit 70); the crash
report writer then failed on the same text, so the error boundary itself raised (exit 1, three
tracebacks) and a half-made run folder stayed. Now such a path is refused before anything is
written, and whatever fails inside the boundary, it still ends in one line and its exit code.
"""

import errno
import os
import subprocess
import sys

import pytest
import ray
import typer
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.commands import error_boundary
from rl_platform.commands.error_boundary import INTERNAL_ERROR_EXIT, user_errors
from tests.conftest import EXPERIMENTS
from tests.reliability.support import CARTPOLE, RLP

NOT_UTF8 = os.fsdecode(b"runs_\xff")  # 'runs_\udcff' with the surrogateescape of PEP 383


def _exploding_app(error: Exception) -> typer.Typer:
    broken = typer.Typer()

    @broken.command()
    @user_errors
    def explode() -> None:
        raise error

    @broken.command()
    @user_errors
    def other() -> None:  # a second command keeps Typer from collapsing the app into one
        pass

    return broken


def _one_line(result, code: int) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    return result.output


def test_rlp_train_with_an_out_folder_that_is_not_utf8_is_refused_before_any_file(tmp_path):
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    env.pop("PYTHONUTF8", None)
    done = subprocess.run(
        [str(RLP), "train", str(CARTPOLE), "-p", "smoke", "--out", os.fsencode(NOT_UTF8)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        timeout=120,
    )
    err = done.stderr.decode("utf-8", "backslashreplace")
    assert done.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "runs_\\xff" in err and "not valid UTF-8" in err
    assert os.listdir(tmp_path) == []  # no run folder, not even its parent


def test_rlp_train_in_a_working_folder_that_is_not_utf8_is_refused(tmp_path, monkeypatch):
    work = tmp_path / os.fsdecode(b"work_\xff")
    work.mkdir()
    monkeypatch.chdir(work)
    result = CliRunner().invoke(app, ["train", str(CARTPOLE), "-p", "smoke"])
    assert "working folder" in _one_line(result, 2) and "work_\\xff" in result.output
    assert os.listdir(work) == []


def _ray_must_not_start(*args, **kwargs) -> None:
    raise AssertionError("Ray was started for a command that must be refused first")


OTHER_VERBS = {
    "search": ["search", str(EXPERIMENTS / "search" / "cartpole_ppo_asha.yaml"), "--no-live"],
    "seeds": ["train", str(CARTPOLE), "-p", "smoke", "--seeds", "2"],
    "record": ["record", "scripted://rlp/Duel-v0/based", "--env", "duel", "-n", "1"],
}


@pytest.mark.parametrize("verb", sorted(OTHER_VERBS))
def test_other_verbs_that_start_ray_refuse_an_out_folder_that_is_not_utf8(
    verb, tmp_path, monkeypatch
):
    args = [*OTHER_VERBS[verb], "--out", str(tmp_path / NOT_UTF8)]
    monkeypatch.setattr(sys, "argv", ["rlp", *args])  # what Ray takes for the job's entrypoint
    monkeypatch.setattr(ray, "init", _ray_must_not_start)
    result = CliRunner().invoke(app, args)
    assert "output folder" in _one_line(result, 2) and "runs_\\xff" in result.output
    assert os.listdir(tmp_path) == []


def test_a_crash_report_of_a_command_line_that_is_not_utf8_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("RLP_CRASH_DIR", str(tmp_path / "crashes"))
    monkeypatch.setattr(sys, "argv", ["rlp", "train", "--out", NOT_UTF8])
    result = CliRunner().invoke(_exploding_app(RuntimeError(f"cannot use {NOT_UTF8}")), ["explode"])
    _one_line(result, INTERNAL_ERROR_EXIT)
    (report,) = (tmp_path / "crashes").glob("crash-*.txt")
    assert "runs_\\udcff" in report.read_text() and "RuntimeError" in report.read_text()


def test_a_crash_report_writer_that_raises_is_still_one_line(monkeypatch):
    def broken_writer(exc: BaseException) -> None:
        raise UnicodeEncodeError("utf-8", NOT_UTF8, 5, 6, "surrogates not allowed")

    monkeypatch.setattr(error_boundary, "save_crash_report", broken_writer)
    result = CliRunner().invoke(_exploding_app(RuntimeError("a bug")), ["explode"])
    assert "no folder was writable" in _one_line(result, INTERNAL_ERROR_EXIT)


def test_a_console_that_cannot_print_the_line_gets_it_as_ascii_on_fd_2(monkeypatch, capfd):
    def broken_print(*args, **kwargs) -> None:
        raise UnicodeEncodeError("ascii", NOT_UTF8, 5, 6, "ordinal not in range(128)")

    monkeypatch.setattr(error_boundary.stderr_console, "print", broken_print)
    result = CliRunner().invoke(
        _exploding_app(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), NOT_UTF8)), ["explode"]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and "runs_\\xff: no space left on device" in err, err
