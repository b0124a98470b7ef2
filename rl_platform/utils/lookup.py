"""Looking a user-given name up in a registry, with close matches in the error."""

import difflib
from collections.abc import Mapping
from typing import TypeVar

from rl_platform.errors import UserError

T = TypeVar("T")


def lookup_named(
    table: Mapping[str, T], name: str, *, what: str, error: type[UserError] = UserError
) -> T:
    """`table[name]`; an unknown name raises `error` naming close matches and every known name."""
    try:
        return table[name]
    except KeyError:
        close = difflib.get_close_matches(str(name), table, n=3, cutoff=0.5)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise error(f"unknown {what} {name!r}.{hint} Known: {', '.join(sorted(table))}") from None
