"""The package's layers, read from the source (docs/architecture.md "Import layers").

`LAYERS` is the one list: docs/architecture.md shows it as `render_layers()` prints it, and a
test below fails when the two differ. Every import statement counts, function-level ones and
`TYPE_CHECKING` ones included; an import also runs the `__init__` of each package it enters
(`import a.b.c` from outside `a.b` runs `a/b/__init__.py`), so those count too, and so does a
module's import of its own parent package (`from . import name`). Checked:

- every module has a layer; no module imports from a higher layer;
- folders (`rl_platform`'s subpackages and top-level modules) import each other one way only:
  no pair, no longer circle;
- no import cycle among modules;
- the `core` layer and below reach no Ray: no `import ray` in their files, and importing all
  of them in one fresh interpreter loads no `ray` module.
"""

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rl_platform"
TOP = "rl_platform"


class Layer(NamedTuple):
    name: str
    contract: str
    members: tuple[str, ...]
    """Top folders of `rl_platform` (and its two root modules, `__init__` being the package
    itself): every module of a folder takes the folder's layer."""


def _layer(name: str, contract: str, members: str) -> Layer:
    return Layer(name, contract, tuple(members.split()))


LAYERS = (
    _layer(
        "base",
        "constants, errors and helpers; no feature, no Ray",
        """base utils""",
    ),
    _layer(
        "core",
        "the spec schema and the Ray-free rules: games, teachers, losses, nets, league, storage",
        """spec envs teachers imitation capacity storage losses nets league sampling replay""",
    ),
    _layer(
        "adapters",
        "RLlib and Ray pieces (RLModules, connectors, learners, env runner, callbacks, config)",
        """rllib ray_runtime env_adapters env_runner modules connectors learners policies bc""",
    ),
    _layer(
        "orchestration",
        "train, search, seeds, evaluation, tournaments, cluster jobs",
        """run search multi_seed evaluation tournament jobs""",
    ),
    _layer(
        "edge",
        "the `rlp` commands and the Python API",
        """__init__ cli commands""",
    ),
)
FOLDERS = {
    "base": "the shared vocabulary: errors, module ids, metric and observation keys, seed trees",
    "utils": "helpers with no feature: YAML, atomic writes, names, secrets, state codec, stats",
    "spec": "the pydantic schema of an experiment, its loading, profiles and overrides",
    "envs": "env ids, sources and user envs, and our own games (duel, connect four, RPS)",
    "teachers": "the one registry of scripted agents (`scripted://ENV/NAME`) and their code",
    "imitation": "behaviour cloning's pure rules: slicing, schedule, label replay, labeler",
    "capacity": "cluster files read without Ray: node types, and whether a spec fits them",
    "storage": "what a run leaves on disk: layout, run folders, locks, checkpoints, uploads",
    "losses": "pure torch loss terms returning `loss_*` terms and diagnostics",
    "nets": "plain-torch networks the RLModules wrap: blocks, LSTM, transformer, history",
    "league": "the pure league: pool, members, matchmaking, ratings, slots, snapshots",
    "sampling": "the array env runner's pure parts: seat plan, rollout buffers, game stats",
    "replay": "the off-policy replay store: fixed device tensors, n-step, prioritized sum tree",
    "rllib": "the RLlib config: builder, algorithm table, RLModule spec, run facts, callbacks",
    "ray_runtime": "Ray's process: start or join, logs, exit; the seams to Ray/RLlib internals",
    "env_adapters": "envs as RLlib sees them: registration, PettingZoo, vector games, duel",
    "env_runner": "the array env runner for vectorized games (`VectorEnvRunner`) and its parts",
    "modules": "our RLModules (new API stack), each wrapping a net from `nets/`",
    "connectors": "ConnectorV2 pieces: opponent history, lookback, reward scaling, BC labels",
    "learners": "Learner subclasses that call `super()` and add terms from `losses/`",
    "policies": "one path from a name to a playable policy (`load_policy`)",
    "bc": "behaviour cloning wired into RLlib: extension, connectors, callback, recording",
    "run": "`rlp train`: the training loop, resume, health, metrics, sinks, export",
    "search": "`rlp search`: search space, Tuner with ASHA or halving, sealed state, results",
    "multi_seed": "`rlp train --seeds`: seed selection, the experiment folder, one trial a seed",
    "evaluation": "`rlp eval/run/watch/plot/doctor`: rollouts, arena games, summaries, video",
    "tournament": "offline tools on a run's league: tournaments, round robins, reports",
    "jobs": "`rlp submit` / `rlp jobs` over Ray's job API",
    "__init__": "the Python API: `load_spec`, and `train` imported lazily",
    "cli": "the `rlp` Typer app: parse, load the spec, call a run function",
    "commands": "every other Typer module: one per feature, the error boundary, shared options",
}
"""Top folder (or root module) -> what it holds, one line: `render_tree()` shows it."""
RAY_FREE_UP_TO = "core"


def render_layers() -> str:
    """`LAYERS` as docs/architecture.md shows it, top layer first."""
    lines = []
    for number, layer in reversed(list(enumerate(LAYERS))):
        lines.append(f"{number} {layer.name}: {layer.contract}")
        lines += textwrap.wrap(
            ", ".join(layer.members), 96, initial_indent="    ", subsequent_indent="    "
        )
    return "\n".join(lines)


def _top_entries() -> dict[str, list[str]]:
    """Each top folder (or root module) of the package -> its modules, relative to it."""
    entries: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if len(parts) == 1:
            entries.setdefault(parts[0], [])
        else:
            inner = "/".join(parts[1:-1]) + "/" if parts[-1] == "__init__" else "/".join(parts[1:])
            entries.setdefault(parts[0], []).extend([inner] if inner != "/" else [])
    return entries


def render_tree() -> str:
    """The package's tree as docs/architecture.md shows it: each layer, top first; each of its
    folders with what it holds (`FOLDERS`) and its modules."""
    entries = _top_entries()
    lines = ["rl_platform/"]
    for layer in reversed(LAYERS):
        lines.append(f"  [{layer.name}]")
        for member in layer.members:
            files = entries.get(member, [])
            name = f"{member}.py" if not files and member != "__init__" else f"{member}/"
            name = "__init__.py" if member == "__init__" else name
            lines.append(f"  {name:<14}{FOLDERS[member]}")
            lines += textwrap.wrap(
                ", ".join(files), 92, initial_indent=" " * 16, subsequent_indent=" " * 16
            )
    return "\n".join(lines)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _own_module(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _ancestors(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:n]) for n in range(1, len(parts))]


def _imported_names(module: str, path: Path) -> list[tuple[str, int]]:
    """Every dotted name an import statement anywhere in the file refers to, with its line;
    `from a import b` gives `a.b` where that is a module, else `a`."""
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
            for alias in node.names:
                full = f"{base}.{alias.name}"
                names.append((full if full in MODULES else base, node.lineno))
    return names


def _imports_own_modules(module: str) -> bool:
    return any(_own_module(name) for name, _ in _imported_names(module, MODULES[module]))


def imports_of(module: str) -> dict[str, int]:
    """The package's modules that importing `module` runs, with the line that runs each: the
    imported module and the packages it enters (never `module`'s own packages, already
    running, unless it imports a name from one of them). A package whose `__init__` imports
    none of ours adds nothing, so entering it is no edge."""
    found: dict[str, int] = {}
    own_packages = set(_ancestors(module))
    for name, line in _imported_names(module, MODULES[module]):
        target = _own_module(name)
        if target is None or target == module:
            continue
        entered = [
            p
            for p in _ancestors(target)
            if p not in own_packages and p in MODULES and _imports_own_modules(p)
        ]
        for reached in [target, *entered]:
            found.setdefault(reached, line)
    return found


def import_graph() -> dict[str, set[str]]:
    return {module: set(imports_of(module)) for module in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
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


def layer_of(module: str) -> int | None:
    """Index into `LAYERS` of the most specific member naming `module` (or a package of it)."""
    relative = "__init__" if module == TOP else module.removeprefix(TOP + ".")
    best: tuple[int, int] | None = None
    for number, layer in enumerate(LAYERS):
        for member in layer.members:
            inside = relative == member or relative.startswith(member + ".")
            if inside and (best is None or len(member) > best[0]):
                best = (len(member), number)
    return None if best is None else best[1]


def folder_of(module: str) -> str:
    """A subpackage of `rl_platform` or a top-level module; `rl_platform` for the package."""
    return module.split(".")[1] if "." in module else module


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges = folders.setdefault(folder_of(module), set())
        edges |= {folder_of(t) for t in targets if folder_of(t) != folder_of(module)}
    return folders


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    found = []
    for module in sorted(graph):
        for target in sorted(graph[module]):
            if layer_of(target) > layer_of(module):
                line = imports_of(module)[target]
                source = MODULES[module].relative_to(ROOT)
                found.append(
                    f"{source}:{line} ({LAYERS[layer_of(module)].name}) imports {target} "
                    f"({LAYERS[layer_of(target)].name})"
                )
    return found


GRAPH = import_graph()
_RAY_FREE_TOP = [layer.name for layer in LAYERS].index(RAY_FREE_UP_TO)
RAY_FREE = sorted(m for m in MODULES if (layer_of(m) or 0) <= _RAY_FREE_TOP)
RAY_FREE_ABOVE_CORE = [
    "rl_platform.modules",  # their package `__init__`s: importing a net through them stays
    "rl_platform.connectors",  # Ray-free (no re-exported adapter)
    "rl_platform.search.halving",  # the rung rules, unit-tested without Ray
]
"""Modules of higher layers that import no Ray either; the probe below checks them with the
`core` layer, in the same interpreter (one start instead of one per test file)."""


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_layers_list_folders_only_each_once():
    members = [member for layer in LAYERS for member in layer.members]
    assert [m for m in members if "." in m] == []
    assert sorted(members) == sorted(set(members)) == sorted(_top_entries() | {"__init__": []})
    assert sorted(FOLDERS) == sorted(members)


def test_the_package_root_keeps_only_its_entry_points():
    loose = sorted(name for name, files in _top_entries().items() if not files)
    assert loose == ["__init__", "cli"]


def test_one_name_per_concept():
    """No two top folders (or root modules) whose names differ by a `_suffix` or `prefix_`."""
    names = sorted(_top_entries())
    clashes = [(a, b) for a in names for b in names if b.startswith(a + "_") or b.endswith("_" + a)]
    assert clashes == []


def test_the_doc_shows_the_tree():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert render_tree() in doc, "docs/architecture.md must show:\n" + render_tree()


def test_every_layer_member_exists():
    for layer in LAYERS:
        for member in layer.members:
            name = TOP if member == "__init__" else f"{TOP}.{member}"
            assert name in MODULES, f"{layer.name}: {member} is not a module or package"


def test_no_import_points_up_a_layer():
    assert upward_imports(GRAPH) == []


def test_folders_import_each_other_one_way_only():
    folders = folder_graph(GRAPH)
    pairs = sorted(
        f"{a} <-> {b}" for a in folders for b in folders[a] if a < b and a in folders.get(b, ())
    )
    assert pairs == []
    assert cycles(folders) == []


def test_the_package_has_no_import_cycle():
    assert cycles(GRAPH) == []


def test_the_checks_find_what_they_look_for():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer_of("rl_platform.rllib.league_callback") > layer_of("rl_platform.league.league")
    assert layer_of("rl_platform") == len(LAYERS) - 1


def test_the_doc_shows_the_layer_list():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    assert render_layers() in doc, "docs/architecture.md must show:\n" + render_layers()


@pytest.mark.parametrize("module", RAY_FREE)
def test_ray_free_modules_do_not_import_ray(module):
    ray_lines = [
        line
        for name, line in _imported_names(module, MODULES[module])
        if name == "ray" or name.startswith("ray.")
    ]
    assert ray_lines == [], f"{MODULES[module]} imports ray at lines {ray_lines}"


_PROBE = """
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
    if any(m == "ray" or m.startswith("ray.") for m in sys.modules):
        print(json.dumps([name]))
        break
else:
    print(json.dumps([]))
"""


def test_importing_the_ray_free_layers_loads_no_ray():
    """Transitively: importing every module up to `RAY_FREE_UP_TO`, then
    `RAY_FREE_ABOVE_CORE`, loads no `ray`."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps([*RAY_FREE, *RAY_FREE_ABOVE_CORE])],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
