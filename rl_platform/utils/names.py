"""Validation of names that become parts of file paths (experiment names, member and module ids).

A name like `../x` or `/etc` must never let a write escape the run folder, so every id that
reaches a path goes through `check_name` first.
"""

import re
from pathlib import Path

from rl_platform.base.errors import UnsafePathError

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
