"""One reader per saved file format (issue #51): each file a run leaves on disk is written and
read by one module, and every other place calls it. A second parser fails here.

A function (or a module's top level) that names a format's file (its constant, or the file
name as a string) and also opens, reads, parses or writes something is a parser of that
format; outside the format's owner that is refused. Names inside f-strings are messages
(`f"no {SPEC_FILE} here"`) and do not count; neither does checking that the file exists."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("rl_platform", "benchmarks")

FORMATS: dict[str, tuple[str, str, str]] = {
    # file: (its constant, where the constant is declared, the module that reads and writes it)
    "spec.yaml": (
        "SPEC_FILE",
        "rl_platform/storage/layout.py",
        "rl_platform/storage/saved_spec.py",
    ),
    "metrics.jsonl": (
        "METRICS_FILE",
        "rl_platform/storage/layout.py",
        "rl_platform/storage/metrics_rows.py",
    ),
    "evaluation.jsonl": (
        "EVALUATION_FILE",
        "rl_platform/storage/layout.py",
        "rl_platform/storage/evaluation_rows.py",
    ),
    "rlp_state.json": (
        "META_FILE",
        "rl_platform/storage/checkpoints.py",
        "rl_platform/storage/checkpoints.py",
    ),
    "league.json": ("MANIFEST", "rl_platform/league/pool.py", "rl_platform/league/pool.py"),
}
OTHER_FILES_OF_THE_NAME = {
    # A constant of the same name that names another file in its own module.
    ("META_FILE", "rl_platform/bc/record.py"),  # record.json of `rlp record`
    ("MANIFEST", "rl_platform/search/seal.py"),  # the seal's manifest.json
}
IO_CALLS = frozenset(
    {
        "open", "read_text", "read_bytes", "write_text", "write_bytes", "loads", "load",
        "dump", "load_spec", "parse_yaml", "read_json", "write_json", "write_text_atomic",
        "write_json_atomic", "read_rows", "truncate_after", "restore_row",
    }
)  # fmt: skip


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _names_outside_fstrings(node: ast.AST) -> list[ast.AST]:
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.JoinedStr):
            continue
        found.append(current)
        for child in ast.iter_child_nodes(current):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                stack.append(child)
    return found


def _scopes(tree: ast.Module) -> list[ast.AST]:
    """The module's top level and every function, each scanned without its nested functions."""
    return [
        tree,
        *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)),
    ]


def _parsers_in(source: str, *, constant: str, file_name: str) -> list[str]:
    """The scopes of one module that name the format's file and do I/O."""
    found = []
    for scope in _scopes(ast.parse(source)):
        nodes = _names_outside_fstrings(scope)
        names_it = any(
            (isinstance(n, ast.Name) and n.id == constant)
            or (isinstance(n, ast.Attribute) and n.attr == constant)
            or (isinstance(n, ast.Constant) and n.value == file_name)
            for n in nodes
        )
        if names_it and any(isinstance(n, ast.Call) and _called_name(n) in IO_CALLS for n in nodes):
            found.append(f"{getattr(scope, 'lineno', 0)} {getattr(scope, 'name', '<module>')}")
    return found


def _parsers(constant: str, file_name: str) -> list[str]:
    return [
        f"{relative}:{where}"
        for folder in SCANNED
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (constant, relative := str(path.relative_to(ROOT))) not in OTHER_FILES_OF_THE_NAME
        for where in _parsers_in(path.read_text(), constant=constant, file_name=file_name)
    ]


@pytest.mark.parametrize("file_name", sorted(FORMATS))
def test_each_saved_format_has_one_reader(file_name: str) -> None:
    constant, declared_in, owner = FORMATS[file_name]
    assert f'{constant} = "{file_name}"' in (ROOT / declared_in).read_text()
    others = [p for p in _parsers(constant, file_name) if not p.startswith(owner + ":")]
    assert others == [], f"{file_name} is read or written outside {owner}: call it instead"


SECOND_PARSERS = {
    "constant, through a variable": (
        "def f(run_dir):\n    path = run_dir / SPEC_FILE\n    return load_spec(path)\n"
    ),
    "literal": "def f(run_dir):\n    return (run_dir / 'spec.yaml').read_text()\n",
    "module level": "TEXT = open(layout.SPEC_FILE).read()\n",
}
NOT_PARSERS = {
    "an existence check": "def f(d):\n    return (d / SPEC_FILE).is_file()\n",
    "a message": "def f(d):\n    raise UserError(f'{d / SPEC_FILE}: bad')\n    open(d)\n",
}


@pytest.mark.parametrize("case", sorted(SECOND_PARSERS))
def test_the_scan_finds_a_second_parser(case: str) -> None:
    found = _parsers_in(SECOND_PARSERS[case], constant="SPEC_FILE", file_name="spec.yaml")
    assert len(found) == 1


@pytest.mark.parametrize("case", sorted(NOT_PARSERS))
def test_the_scan_leaves_other_uses_alone(case: str) -> None:
    assert _parsers_in(NOT_PARSERS[case], constant="SPEC_FILE", file_name="spec.yaml") == []
