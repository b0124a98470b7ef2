"""Size limits of the package's source (docs/architecture.md, "Limits"): no module under
`rl_platform/` over 400 lines, no function over 60 lines, each exception listed below with
why. An exception that is no longer over its limit fails too: delete it, so the list stays
the list of files and functions that still break the rule. Ruff keeps the other limits
(complexity, branches, statements: pyproject.toml `[tool.ruff.lint]`).
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rl_platform"
MAX_MODULE_LINES = 400
# From `def` to the function's last line: the count (and the limit) that
# tests/unit/test_benchmarks_measure_the_product.py applies to benchmarks/.
MAX_FUNCTION_LINES = 60

LONG_MODULES = {}
"""Path from the repository root -> why it may pass MAX_MODULE_LINES."""

LONG_FUNCTIONS = {
    "rl_platform/cli.py::train": (
        "63 lines, 32 of them its signature: Typer takes each option of `rlp train` as an "
        "annotated parameter with its help text"
    ),
}
"""`path::function` -> why it may pass MAX_FUNCTION_LINES."""

MODULES = sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def module_lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def function_lines(path: Path) -> list[tuple[str, int]]:
    """Each function's name and its lines from `def` to its last line (methods and nested
    functions included, by their own name)."""
    tree = ast.parse(path.read_text(), str(path))
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def long_modules() -> dict[str, int]:
    return {_name(p): n for p in MODULES if (n := module_lines(p)) > MAX_MODULE_LINES}


def long_functions() -> dict[str, int]:
    """`path::name` -> lines of the longest function of that name in the module."""
    long: dict[str, int] = {}
    for path in MODULES:
        for name, n in function_lines(path):
            key = f"{_name(path)}::{name}"
            if n > max(MAX_FUNCTION_LINES, long.get(key, 0)):
                long[key] = n
    return long


def test_no_module_over_400_lines_but_the_listed_ones():
    unlisted = {name: n for name, n in long_modules().items() if name not in LONG_MODULES}
    assert unlisted == {}, (
        f"over {MAX_MODULE_LINES} lines; split the module (or list it in LONG_MODULES with why)"
    )


def test_no_function_over_60_lines_but_the_listed_ones():
    unlisted = {name: n for name, n in long_functions().items() if name not in LONG_FUNCTIONS}
    assert unlisted == {}, (
        f"over {MAX_FUNCTION_LINES} lines; split the function (or list it in LONG_FUNCTIONS)"
    )


@pytest.mark.parametrize(
    ("listed", "found"),
    [(LONG_MODULES, long_modules), (LONG_FUNCTIONS, long_functions)],
    ids=["modules", "functions"],
)
def test_every_exception_is_still_over_its_limit(listed, found):
    stale = sorted(set(listed) - set(found()))
    assert stale == [], "within the limit now (or gone): delete these exceptions"


def test_the_checks_find_what_they_look_for(tmp_path):
    source = tmp_path / "m.py"
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source.write_text(
        f"def long():\n{body}\n\n\nclass C:\n    def short(self):\n        return 1\n"
    )
    assert function_lines(source) == [("long", MAX_FUNCTION_LINES + 1), ("short", 2)]
    assert module_lines(source) == MAX_FUNCTION_LINES + 6
