"""Validation of names that become parts of file paths (experiment names, member and module ids),
and of paths whose names are not UTF-8.

A name like `../x` or `/etc` must never let a write escape the run folder, so every id that
reaches a path goes through `check_name` first.
"""

import re
import sys
from pathlib import Path

from rl_platform.base.errors import UnsafePathError, UserError

# Letters, digits, '.', '_', '-' and '+' (for "main+1"-style ids), starting with a letter or digit.
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+\-]{0,127}$")


def check_name(name: str, *, what: str = "name") -> str:
    """Return `name` unchanged if it is safe as a single path component, else raise."""
    if not isinstance(name, str) or not _SAFE_NAME.fullmatch(name) or name in {".", ".."}:
        raise UnsafePathError(
            f"{what} {name!r} is not allowed in a path: use 1-128 letters, digits, '.', '_', "
            "'-' or '+', starting with a letter or digit (no '/', '..', absolute paths or NUL)"
        )
    return name


def is_safe_name(name: str) -> bool:
    try:
        check_name(name)
    except UnsafePathError:
        return False
    return True


def safe_join(root: str | Path, *parts: str) -> Path:
    """Join validated components under `root` and check the result stays inside it."""
    root_path = Path(root).resolve()
    target = root_path.joinpath(*(check_name(part, what="path component") for part in parts))
    resolved = target.resolve()
    if resolved != root_path and root_path not in resolved.parents:
        raise UnsafePathError(f"path {target} escapes {root_path}")
    return target


def shown_path(path: str | Path) -> str:
    """`path` (or any text) as something every console can print: bytes that are not UTF-8,
    which Python keeps as lone surrogates (PEP 383), shown as `\\xff`, in any locale."""
    text = str(path)
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no undecodable byte made
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def require_utf8_path(path: str | Path, *, what: str) -> None:
    """Refuse a path whose name is not valid UTF-8 (`runs_\\xff`), naming it: Ray encodes the
    working folder and the command line as UTF-8 and fails on such a byte, and the run's
    log and crash report would too, so a run there is refused before anything is written."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        raise UserError(
            f"{what} {shown_path(path)}: the name is not valid UTF-8 (Ray and the run's files "
            "need UTF-8 paths); rename it or choose another folder"
        ) from None


def require_utf8_start(folder: str | Path, *, what: str = "the output folder") -> None:
    """Before a run, search or seeds' experiment writes anything or starts Ray: the working
    folder, the folder it writes under (`--out`, or the one it resumes) and the command line
    (Ray records it as the job's entrypoint) must be UTF-8, else one line naming the path."""
    require_utf8_path(Path.cwd(), what="the working folder")
    require_utf8_path(folder, what=what)
    for arg in sys.argv:
        require_utf8_path(arg, what="the command line's argument")
