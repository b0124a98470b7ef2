"""Import code a user names in a spec or on the command line (`package.module:attribute`).

Errors are one line: the user's module and, for an exception raised inside it, the user's
own frames (file:line), never rl_platform's or importlib's.
"""

import importlib
import os
import re
import sys
import traceback
from types import ModuleType
from typing import Any

from rl_platform.base.errors import UserError

ENTRY_POINT = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w]*$")
"""`package.module:attribute`."""


class UserCodeError(UserError, ValueError):
    """User code could not be imported or built; the message is one line.

    A ValueError too, so pydantic validators report it as a field error."""


def is_entry_point(text: str) -> bool:
    return bool(ENTRY_POINT.match(text))


def user_frames(exc: BaseException) -> str:
    """` (at file:line in fn <- ...)`: the frames of a traceback outside Python's import
    machinery and rl_platform, newest first, or '' when there are none."""
    frames = [
        f"{frame.filename}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in frame.filename and "/rl_platform/" not in frame.filename
    ]
    return f" (at {' <- '.join(reversed(frames[-3:]))})" if frames else ""


def import_user_module(
    module_name: str, *, label: str, error: type[UserCodeError] = UserCodeError
) -> ModuleType:
    """Import `module_name`; `error` with `label` (if any) and the user's frames on failure.

    The working directory is searched first, as `python -m` does: the `rlp` script's own
    folder is on `sys.path` instead, and users run `rlp` from their project's root."""
    prefix = f"{label}: " if label else ""
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise error(f"{prefix}no module named {exc.name!r}") from None
        raise error(f"{prefix}importing {module_name} failed: {exc}{user_frames(exc)}") from None
    except Exception as exc:  # the user's module raised while importing
        raise error(
            f"{prefix}importing {module_name} failed: {type(exc).__name__}: {exc}{user_frames(exc)}"
        ) from None


def load_entry_point(text: str, *, label: str) -> Any:
    """The attribute `package.module:attribute` names; UserCodeError naming `label` if not."""
    if not is_entry_point(text):
        raise UserCodeError(f"{label}: {text!r} is not package.module:attribute")
    module_name, _, attribute = text.partition(":")
    module = import_user_module(module_name, label=label)
    if not hasattr(module, attribute):
        raise UserCodeError(f"{label}: module {module_name} has no {attribute!r}")
    return getattr(module, attribute)
