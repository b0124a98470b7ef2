"""The package's layering, read from the source: no import cycles (function-level imports
included), and the pure core never imports Ray (directly, or through what it imports)."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "rl_platform"
# The Ray-free core (HOUSE_STYLE "Import rule"): schema, losses, league rules, networks, the
# duel game. Each entry is a module or a package prefix; `EXCEPT` names the RLlib adapters
# that live beside them.
PURE = (
    "rl_platform.spec",
    "rl_platform.losses",
    "rl_platform.league",
    "rl_platform.modules.nets",
    "rl_platform.modules.lstm_net",
    "rl_platform.modules.masked_mlp_net",
    "rl_platform.modules.transformer",
    "rl_platform.modules.streaming_encoder",
    "rl_platform.modules.transformer_lstm_net",
    "rl_platform.envs.duel",
    "rl_platform.envs.vector_game",
    "rl_platform.envs.catalog",
    "rl_platform.envs.sources",
    "rl_platform.envs.user_envs",
    "rl_platform.envs.env_info",
    "rl_platform.envs.env_kwargs",
    "rl_platform.utils.user_code",
    "rl_platform.connectors.history_window",
    "rl_platform.teachers",
    "rl_platform.seeds",
    "rl_platform.cluster",
)
EXCEPT = (
    "rl_platform.league.callback",
    "rl_platform.envs.duel.rllib_env",
    "rl_platform.seeds.tuner",
)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _imported_names(module: str, path: Path) -> list[tuple[str, int]]:
    """Every dotted name an import statement anywhere in the file refers to, with its line."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            names += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]
            names.append((base, node.lineno))
    return names


def _own_module(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (a package's own parents left out: importing
    `a.b.c` runs `a/__init__` and `a/b/__init__` first, which is not a dependency of theirs)."""
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module, path in MODULES.items():
        for name, _ in _imported_names(module, path):
            target = _own_module(name)
            if target and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _is_pure(module: str) -> bool:
    inside = any(module == p or module.startswith(p + ".") for p in PURE)
    return inside and not any(module == e or module.startswith(e + ".") for e in EXCEPT)


PURE_MODULES = sorted(m for m in MODULES if _is_pure(m))


def test_the_package_has_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]


def test_every_pure_package_exists():
    for prefix in PURE:
        assert any(m == prefix or m.startswith(prefix + ".") for m in MODULES), prefix


@pytest.mark.parametrize("module", PURE_MODULES)
def test_pure_modules_do_not_import_ray_themselves(module):
    ray_lines = [
        line
        for name, line in _imported_names(module, MODULES[module])
        if name == "ray" or name.startswith("ray.")
    ]
    assert ray_lines == [], f"{MODULES[module]} imports ray at lines {ray_lines}"


_PROBE = """
import importlib, json, sys
blame = {}
for name in json.loads(sys.argv[1]):
    before = any(m == "ray" or m.startswith("ray.") for m in sys.modules)
    importlib.import_module(name)
    if not before and any(m == "ray" or m.startswith("ray.") for m in sys.modules):
        blame[name] = True
        break
print(json.dumps(sorted(blame)))
"""


def test_importing_the_pure_core_loads_no_ray():
    """Transitively: importing every pure module (in one fresh interpreter) loads no `ray`."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(PURE_MODULES)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
