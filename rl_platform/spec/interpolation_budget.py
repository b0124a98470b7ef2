"""Bound what `${...}` interpolation can produce before OmegaConf resolves anything.

`b: ${a}${a}`, `c: ${b}${b}`, ... doubles a string per line: 40 lines resolve to a terabyte and
take exponential time, since OmegaConf re-resolves every reference. The resolved length of each
value is computed here from the unresolved data (each referenced node once, memoized) and a
spec whose values would exceed `MAX_RESOLVED_CHARS` is refused with the key that does.
"""

import re
from collections.abc import Iterator
from typing import Any

MAX_RESOLVED_CHARS = 100_000
MAX_TOTAL_CHARS = 1_000_000
MAX_NESTING = 16
"""`${...}` inside `${...}` (`${oc.env:A,${oc.env:B,...}}`): OmegaConf's parser recurses once
per level, and 300 levels ended in a RecursionError (exit 70)."""
# Innermost `${...}`: a reference (`a.b`, `.x`) or a resolver call (`oc.env:NAME`).
_INTERPOLATION = re.compile(r"\$\{([^${}]*)\}")


class InterpolationTooLarge(ValueError):
    def __init__(self, key: str, size: int) -> None:
        super().__init__(
            f"{key}: its interpolations would resolve to more than {MAX_RESOLVED_CHARS} "
            f"characters ({size}+); a spec value needs far fewer"
        )


class InterpolationTooDeep(ValueError):
    def __init__(self, key: str, depth: int) -> None:
        super().__init__(
            f"{key}: `${{...}}` nested {depth} levels deep (at most {MAX_NESTING}); "
            "a spec value needs far fewer"
        )


def nesting_depth(text: str) -> int:
    """How deep `${` opens nest in `text` (0 without interpolation)."""
    depth = deepest = 0
    for i, char in enumerate(text):
        if char == "$" and text[i + 1 : i + 2] == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif char == "}" and depth:
            depth -= 1
    return deepest


def _lookup(data: Any, dotted: str) -> Any:
    node = data
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


class _Sizer:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.sizes: dict[str, int] = {}

    def size_of(self, key: str, value: Any) -> int:
        """Characters `value` (at `key`) resolves to, at most a little over the limit."""
        if key in self.sizes:
            return self.sizes[key]
        self.sizes[key] = 0  # a reference cycle: OmegaConf reports it when resolving
        if isinstance(value, dict):
            total = sum(self.size_of(f"{key}.{k}".lstrip("."), v) for k, v in value.items())
        elif isinstance(value, list):
            total = sum(self.size_of(f"{key}.{i}".lstrip("."), v) for i, v in enumerate(value))
        elif isinstance(value, str):
            total = self._string_size(value)
        else:
            total = len(str(value))
        self.sizes[key] = min(total, MAX_RESOLVED_CHARS + 1)
        return self.sizes[key]

    def _string_size(self, text: str) -> int:
        total = len(_INTERPOLATION.sub("", text))
        for reference in _INTERPOLATION.findall(text):
            if ":" in reference or reference.startswith(".") or not reference:
                total += len(reference)  # a resolver or relative reference: its text
                continue
            total += self.size_of(reference, _lookup(self.root, reference))
        return total


def _leaves(value: Any, key: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{key}.{k}" if key else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{key}.{i}" if key else str(i))
    else:
        yield key, value


def check_interpolation_budget(data: dict[str, Any]) -> None:
    """Raise `InterpolationTooLarge` naming the first value (in file order) that resolves to
    more than `MAX_RESOLVED_CHARS`, or the value at which all of them together would."""
    sizer, total = _Sizer(data), 0
    for key, value in _leaves(data, ""):
        size = sizer.size_of(key, value)
        total += size
        if size > MAX_RESOLVED_CHARS or total > MAX_TOTAL_CHARS:
            raise InterpolationTooLarge(key, size)


def check_nesting(data: Any, *, key: str = "") -> None:
    """Raise `InterpolationTooDeep` naming the first value whose `${...}` nest deeper than
    `MAX_NESTING`; before OmegaConf sees the data (it parses interpolations on creation)."""
    for leaf_key, value in _leaves(data, key):
        if isinstance(value, str) and (depth := nesting_depth(value)) > MAX_NESTING:
            raise InterpolationTooDeep(leaf_key, depth)
