"""How every `rlp` command ends on an error: one line on stderr, no traceback, an exit code.

Each Typer command is decorated with `user_errors` where it is defined, so it behaves the same
whether it is registered on the main app, on a sub-app (`rlp jobs`, `rlp league`) or invoked
directly in tests with `CliRunner`.

Exit codes (table in docs/reliability.md), all declared here but `TRAINING_STOPPED_EXIT`, which
is in `base/errors.py` as `ray_runtime/lost_ray.py` exits with it too: 0 success, `FAILED_EXIT`
for a command's own "not OK" verdict, `UserError.exit_code` (2) for bad input and for files the OS
refuses (missing, a file where a folder is needed, no permission, disk full),
`TRAINING_STOPPED_EXIT`, `INTERNAL_ERROR_EXIT` for a bug (one line plus a saved crash report)
and `INTERRUPTED_EXIT`. A training forced to exit by a signal (rl_platform/run/signals.py)
exits with 128 + the signal, 143 for SIGTERM, the shell's convention as for `INTERRUPTED_EXIT`.
"""

import contextlib
import functools
import math
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import typer
from rich.markup import escape
from typer.exceptions import TyperException

from rl_platform.base.errors import (
    TRAINING_STOPPED_EXIT,
    TrainingHealthError,
    UserError,
    user_error_in,
)
from rl_platform.utils.consoles import stderr_console
from rl_platform.utils.crash_report import save_crash_report
from rl_platform.utils.names import shown_path
from rl_platform.utils.secrets import environment_secrets, mask_text

FAILED_EXIT = 1
"""The command ran and its answer is "not OK": a job that did not succeed, failing doctor checks."""
INTERNAL_ERROR_EXIT = 70
"""An unexpected exception, i.e. a bug in rl_platform (EX_SOFTWARE in sysexits.h)."""
INTERRUPTED_EXIT = 130
"""Interrupted by Ctrl+C (128 + SIGINT, the shell's convention), e.g. a search with trials left."""


def _say(prefix: str, line: str) -> None:
    """One line on stderr. The boundary never raises: a console that cannot print it (a closed
    stream, an encoding without its characters) gets it as ASCII bytes on fd 2 instead. Bytes
    of a path that are not UTF-8 are shown as `\\xff` (`shown_path`)."""
    line = shown_path(line)
    try:
        # escape: messages quote user input (ids, paths, `[x]`) that rich must not read as markup
        stderr_console.print(
            f"[bold red]{prefix}:[/] {escape(line)}", highlight=False, soft_wrap=True
        )
    except Exception:
        with contextlib.suppress(OSError):
            os.write(2, f"{prefix}: {line}\n".encode("ascii", "backslashreplace"))


def _fail(prefix: str, exc: Exception | str, *, code: int) -> typer.Exit:
    # mask: messages quote paths too, which may hold a secret (`--out /mnt/$API_KEY/runs`).
    _say(prefix, mask_text(str(exc), environment_secrets()))
    return typer.Exit(code=code)


@contextlib.contextmanager
def secrets_masked(secrets: Iterable[str]) -> Iterator[None]:
    """A user error or training stop leaving the block names none of `secrets` (the values of
    the command's spec, `secret_values`), as a spec error does: a run folder under an `--out`
    that holds one, say. Its exit code is kept."""
    known = set(secrets)
    try:
        yield
    except (UserError, TrainingHealthError) as exc:
        line = mask_text(str(exc), known)
        if line == str(exc):
            raise
        raise (UserError if isinstance(exc, UserError) else TrainingHealthError)(line) from None


def positive_finite(value: float | None) -> float | None:
    """Option callback: `--fps nan`, `inf`, `0` and negatives are usage errors (exit 2);
    Typer's `min=` lets NaN through because every comparison with NaN is false."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise typer.BadParameter(f"must be a finite number > 0, got {value}")
    return value


def _os_error_line(exc: OSError) -> str:
    """`[Errno 20] Not a directory: 'x'` as `x: not a directory`, hinting at the fix. The
    writes of `utils/atomic.py` and the run lock name their file when the OS does not (a full
    disk); an `OSError(errno.ENOSPC)` raised bare still reads "no space left on device"."""
    reason = (exc.strerror or (exc.errno and os.strerror(exc.errno)) or str(exc)).lower()
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    where = " -> ".join(paths)
    hint = {
        "not a directory": "give a folder path (or a new name), not a file",
        "is a directory": "give a file path, not a folder",
        "permission denied": "choose a folder you can write to or fix its permissions",
        "no such file or directory": "check the path",
        "no space left on device": "free some disk space; saved files are intact",
    }.get(reason)
    line = f"{where}: {reason}" if where else reason
    return f"{line} ({hint})" if hint else line


def _unexpected(exc: Exception) -> typer.Exit:
    try:
        report = save_crash_report(exc)
    except Exception:  # it returns None on any failure; kept so, should it ever raise
        report = None
    where = f"traceback saved to {report}" if report else "no folder was writable for a report"
    what = mask_text(" ".join(str(exc).split()), environment_secrets())[:300]
    _say(
        "unexpected error",
        f"{type(exc).__name__}: {what}; {where} "
        "(attach it to a bug report unless the cause is in your own code)",
    )
    return typer.Exit(code=INTERNAL_ERROR_EXIT)


def user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """The error boundary of a command: `UserError`s and files the OS refuses are one `error:`
    line (exit 2), `TrainingHealthError` exits `TRAINING_STOPPED_EXIT` (3), Ctrl+C exits 130,
    and anything else is a bug: one line naming a saved crash report (exit 70). Never a raw
    traceback."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort, TyperException):
            raise  # Typer's own exits and usage errors already print what they should
        except UserError as exc:
            raise _fail("error", exc, code=exc.exit_code) from None
        except TrainingHealthError as exc:
            raise _fail("training stopped", exc, code=TRAINING_STOPPED_EXIT) from None
        except OSError as exc:
            raise _fail("error", _os_error_line(exc), code=UserError.exit_code) from None
        except KeyboardInterrupt:
            with contextlib.suppress(Exception):
                stderr_console.print("interrupted", highlight=False)
            raise typer.Exit(code=INTERRUPTED_EXIT) from None
        except Exception as exc:
            cause = user_error_in(exc)  # a user's env error, re-raised by RLlib or Ray
            if cause is not None:
                raise _fail("error", cause, code=cause.exit_code) from None
            raise _unexpected(exc) from None

    wrapper.error_boundary = True  # type: ignore[attr-defined]  # checked by the tests
    return wrapper
