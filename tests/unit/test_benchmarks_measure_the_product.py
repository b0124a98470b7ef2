"""benchmarks/ measures the product through its public entry points (issue #42, item 4).

Read from the source, no script is run: no benchmark starts Ray or runs a training loop of its
own (they train through `rl_platform.train` or `rlp train`), none reads or writes another
object's private attribute, none edits `sys.path` (the folder is a package run as `python -m
benchmarks.NAME`), and no function is longer than 60 lines. The yardsticks that measure stock
RLlib are the one exception to the first rule, on purpose.
"""

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

BENCHMARKS = REPO_ROOT / "benchmarks"
FILES = sorted(BENCHMARKS.rglob("*.py"))
STOCK_RLLIB = {"rllib_cartpole_example.py", "stock_rllib_hopper_ppo.py"}
"""Yardsticks that are RLlib without rl_platform: their own `ray.init` and `algo.train()`."""
MAX_FUNCTION_LINES = 60


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def _name(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def _calls(tree: ast.Module) -> list[tuple[str, int]]:
    """`owner.method` of every call of an attribute, with its line."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = owner.id if isinstance(owner, ast.Name) else "?"
            out.append((f"{owner_name}.{node.func.attr}", node.lineno))
    return out


def test_the_folder_is_a_package_with_its_shared_helpers() -> None:
    assert (BENCHMARKS / "__init__.py").is_file()
    assert (BENCHMARKS / "common" / "__init__.py").is_file()


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_no_own_ray_start_or_training_loop(path: Path) -> None:
    """No `ray.init(...)`, no `algo.train()` and no `config.build_algo()` (a torch module's
    training mode reads `net.train(True)` here)."""
    if path.name in STOCK_RLLIB:
        return
    found = [
        (f"{node.func.attr}", node.lineno)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and (
            (
                (isinstance(node.func.value, ast.Name) and node.func.value.id == "ray")
                and node.func.attr == "init"
            )
            or (node.func.attr in ("train", "build_algo") and not node.args and not node.keywords)
        )
    ]
    assert found == [], f"{_name(path)}: train through rl_platform.train or `rlp train`"


def _own_private(tree: ast.Module) -> set[str]:
    """`self._x` names this file assigns or defines: its own classes' private state and
    methods."""
    methods = {
        node.name
        for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef)
    }
    return methods | {
        target.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    }


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_no_private_attribute_of_another_object(path: Path) -> None:
    """Private names only on `self`, and only those this file's classes set: a subclass of a
    product class uses its public methods (`ModulePolicy.reset_state`), not its state."""
    tree = _tree(path)
    own = _own_private(tree)
    found = [
        (node.attr, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in own)
    ]
    assert found == [], f"{_name(path)}: use a public name"


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_no_sys_path_edits_and_no_bare_sibling_imports(path: Path) -> None:
    siblings = {p.stem for p in BENCHMARKS.rglob("*.py")} - {"__init__"}
    tree = _tree(path)
    edits = [line for call, line in _calls(tree) if call in ("path.insert", "path.append")]
    bare = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in siblings
    ]
    bare += [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Import) and any(a.name in siblings for a in node.names)
    ]
    assert (edits, bare) == ([], []), f"{_name(path)}: import as `from benchmarks.common ...`"


@pytest.mark.parametrize("path", FILES, ids=_name)
def test_no_function_over_60_lines(path: Path) -> None:
    long = [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == [], _name(path)
