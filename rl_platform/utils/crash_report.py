"""Crash reports: the traceback of an unexpected exception, saved for a bug report.

The CLI prints one line and the report's path instead of a raw traceback (docs/reliability.md,
"Exit codes"). Reports go to `$RLP_CRASH_DIR`, else `$XDG_CACHE_HOME/rl_platform/crashes`, else
`~/.cache/rl_platform/crashes`; known secrets are masked by value before anything is written.
"""

import os
import platform
import sys
import tempfile
import time
import traceback
from pathlib import Path

from rl_platform.utils.atomic import write_bytes_atomic
from rl_platform.utils.secrets import environment_secrets, mask_text


def crash_dir() -> Path:
    explicit = os.environ.get("RLP_CRASH_DIR")
    if explicit:
        return Path(explicit).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache).expanduser() / "rl_platform" / "crashes"


def _report_text(exc: BaseException) -> str:
    header = [
        f"command: {' '.join(sys.argv)}",
        f"time: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}",
        f"python: {sys.version.split()[0]} on {platform.platform()}",
        "",
    ]
    body = "".join(traceback.format_exception(exc))
    return mask_text("\n".join(header) + body, environment_secrets())


def save_crash_report(exc: BaseException) -> Path | None:
    """Write the report and return its path; `None` when no folder takes it, whatever the
    reason (a full disk, no home folder, anything else): the caller still prints its one line,
    and a failing disk must not turn into a second traceback. Text that is not UTF-8 (a path
    or argument with a byte like `\\xff`, kept by Python as a lone surrogate) is written escaped."""
    try:
        name = f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt"
        data = _report_text(exc).encode("utf-8", "backslashreplace")
        folders = [crash_dir(), Path(tempfile.gettempdir())]
    except Exception:  # the report is a courtesy: never a reason for a second failure
        return None
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(folder / name, data)
            return folder / name
        except Exception:
            continue
    return None
