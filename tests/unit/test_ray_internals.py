"""Ray's, RLlib's and Tune's internals are used in two seams only (docs/architecture.md, "Two
seams to Ray's internals"): `ray_runtime/ray_internals.py` (Ray core) and
`ray_runtime/rllib_internals.py` (RLlib, Tune). Every module of rl_platform/ is read (AST);
outside the seams the scan fails, naming the file and line, on

- a private attribute (`x._name`, `getattr(x, "_name")`) of an object that is not ours: not
  `self`/`cls`/`super()`, not a module other than Ray's, not a name the same file defines;
- an import of a private Ray module (`ray._private...`) or its name as a string;
- a patch: `patch_call` on an object that is not ours, an assignment to an attribute of a Ray
  module or class.

Our own subclasses of Ray's classes may use the internals of their bases through `self` and
`super()`: `THROUGH_SELF` lists each such use, found by reading the bases (imported), and the
test fails on one it does not list or on one it lists that is gone. Each function of the seams
says why no public API serves, and tests/integration/test_ray_touchpoints.py exercises each one
against the installed Ray (a test named after it), so an upgrade fails one named test per
touchpoint that moved.
"""

import ast
import importlib
import inspect
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rl_platform"
SEAMS = (
    "rl_platform/ray_runtime/ray_internals.py",
    "rl_platform/ray_runtime/rllib_internals.py",
)
TOUCHPOINT_TESTS = ROOT / "tests" / "integration" / "test_ray_touchpoints.py"
PATCHES_OF_OUR_OWN = {
    "rl_platform/run/loop.py": (
        "the phase clock around the off-policy driver's own `learn` (`learning_methods()`), "
        "an object of ours; RLlib's objects are patched through the seam"
    ),
}
"""Files outside the seams that call `patch_call`, each with why the object is ours."""
NAMEDTUPLE_API = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults"})
PRIVATE_RAY_MODULE = re.compile(r"ray(\.\w+)*\._\w+(\.\w+)*")
ATTRIBUTE_FUNCTIONS = frozenset({"getattr", "hasattr", "setattr", "delattr"})

THROUGH_SELF: dict[str, set[str]] = {
    # VectorEnvRunner (a MultiAgentEnvRunner): the env-to-module pipeline RLlib builds for it,
    # and the flag its `sample()` reads to reset the envs first.
    "rl_platform/env_runner/vector_env_runner.py": {"_env_to_module"},
    # BoundedJobClient (Ray's JobSubmissionClient): the one method all requests go through,
    # given a timeout, and the address it names when one times out.
    "rl_platform/jobs/bounded_client.py": {"_do_request", "_address"},
    # ArrayPPOLearner: what RLlib's `Learner.update` does before an update of its own.
    "rl_platform/learners/array_ppo.py": {"_check_is_built", "_weights_seq_no", "_device"},
    # BCPPOLearner: its learner connector, its index among the learners (seeds), and the one
    # update of a batch, called again for a label-replay step.
    "rl_platform/learners/bc_ppo.py": {"_learner_connector", "_learner_index", "_update"},
    # LearnerConnectorState: the learner connector's state, as `get_state` checks components.
    "rl_platform/learners/connector_state.py": {"_learner_connector", "_check_component"},
    # IndexedChunkStates: the learner connector whose state piece it replaces.
    "rl_platform/learners/indexed_chunk_states.py": {"_learner_connector"},
    # HalvingScheduler (a Tune FIFOScheduler): the metric Tune's `set_search_properties` sets.
    "rl_platform/search/halving_scheduler.py": {"_metric"},
}
"""File -> the private names of Ray, RLlib or Tune base classes that our subclasses defined
there (or the mixins of ours they are built with) use through `self` and `super()`."""


@dataclass(frozen=True)
class Use:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _private_ray_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == "ray" and any(_private(part) for part in parts[1:])


def _is_own(node: ast.expr) -> bool:
    """`self`, `cls` or `super()`."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
    )


def _own_names(tree: ast.Module) -> set[str]:
    """Private names the file defines itself: functions, classes, class attributes and the
    attributes it assigns on `self`/`cls`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else []
                target = item.target if isinstance(item, ast.AnnAssign) else None
                names |= {t.id for t in [*targets, target] if isinstance(t, ast.Name)}
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and _is_own(node.value)
        ):
            names.add(node.attr)
    return {name for name in names if _private(name)}


@dataclass(frozen=True)
class Scope:
    """What a file binds: its own private names, other packages' modules, Ray's names."""

    own: set[str]
    foreign_modules: set[str]
    ray_names: set[str]

    @classmethod
    def of(cls, tree: ast.Module) -> "Scope":
        foreign, ray = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    bound = alias.asname or alias.name.split(".")[0]
                    (ray if alias.name.split(".")[0] == "ray" else foreign).add(bound)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "ray":
                ray |= {alias.asname or alias.name for alias in node.names}
        return cls(_own_names(tree), foreign, ray)

    def foreign(self, receiver: ast.expr, name: str) -> bool:
        """Whether `receiver.name` is a private name of an object that is not ours."""
        if not _private(name) or _is_own(receiver) or name in NAMEDTUPLE_API | self.own:
            return False
        return not (isinstance(receiver, ast.Name) and receiver.id in self.foreign_modules)


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _import_use(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(_private_ray_module(alias.name) for alias in node.names)
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        modules = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        return any(_private_ray_module(module) for module in modules)
    return False


def _attribute_use(node: ast.AST, scope: Scope) -> bool:
    """`x._name` of an object not ours, or an assignment to an attribute of Ray's."""
    if not isinstance(node, ast.Attribute):
        return False
    receiver = node.value
    patch = isinstance(node.ctx, ast.Store) and isinstance(receiver, ast.Name)
    return (patch and receiver.id in scope.ray_names) or scope.foreign(receiver, node.attr)


def _call_use(node: ast.AST, scope: Scope) -> bool:
    """`getattr(x, "_name")` (and its kin) of an object not ours, or a `patch_call`."""
    called = _called(node)
    if called == "patch_call":
        return True
    if called not in ATTRIBUTE_FUNCTIONS or len(node.args) < 2:
        return False
    receiver, name = node.args[0], node.args[1]
    named = isinstance(name, ast.Constant) and isinstance(name.value, str)
    return named and scope.foreign(receiver, name.value)


def private_uses(source: str, path: str = "<source>") -> list[Use]:
    """The uses of Ray's internals in `source` (module docstring), in line order."""
    tree = ast.parse(source)
    scope = Scope.of(tree)
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if PRIVATE_RAY_MODULE.fullmatch(node.value):
                uses.append(Use(path, node.lineno, repr(node.value)))
        elif _import_use(node) or _attribute_use(node, scope) or _call_use(node, scope):
            uses.append(Use(path, node.lineno, ast.unparse(node)))
    return sorted(uses, key=lambda use: use.line)


def _modules() -> list[tuple[str, Path]]:
    return [(p.relative_to(ROOT).as_posix(), p) for p in sorted(PACKAGE.rglob("*.py"))]


def uses_outside_the_seams() -> list[Use]:
    found = []
    for name, path in _modules():
        if name in SEAMS:
            continue
        uses = private_uses(path.read_text(), name)
        if name in PATCHES_OF_OUR_OWN:
            uses = [use for use in uses if not use.text.startswith("patch_call(")]
        found += uses
    return found


def test_ray_internals_are_used_in_the_seams_only() -> None:
    uses = uses_outside_the_seams()
    assert not uses, (
        "Ray/RLlib/Tune internals outside the seams; move each into "
        f"{' or '.join(SEAMS)} as a named function saying why no public API serves:\n"
        + "\n".join(map(str, uses))
    )


def test_the_scan_finds_what_it_looks_for() -> None:
    source = textwrap.dedent(
        """
        import os
        import ray._private.worker as ray_worker
        from ray._private import ray_constants
        from ray.util import log_once

        class Ours:
            _kind = "ours"

            def __init__(self):
                self._mine = 1

            def peek(self, other, learner, runner, parts):
                os._exit(0)  # another package's module
                parts._replace(a=1)  # a namedtuple's API
                other._mine, other._kind, super()._update(), self._device  # ours, or through self
                learner._device
                getattr(runner, "_env_to_module", None)
                log_once.x = 1
                patch_call(learner, "update", ("clock",))
                return "ray._private.runtime_env"
        """
    )
    found = [use.text for use in private_uses(source)]
    assert found == [
        "import ray._private.worker as ray_worker",
        "from ray._private import ray_constants",
        "learner._device",
        "getattr(runner, '_env_to_module', None)",
        "log_once.x",
        "patch_call(learner, 'update', ('clock',))",
        "'ray._private.runtime_env'",
    ]


def _seam_functions() -> dict[str, str]:
    """Public module-level function of either seam -> its docstring."""
    functions = {}
    for seam in SEAMS:
        tree = ast.parse((ROOT / seam).read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not _private(node.name):
                functions[node.name] = ast.get_docstring(node) or ""
    return functions


def test_each_seam_function_says_why_no_public_api_serves() -> None:
    silent = [name for name, doc in _seam_functions().items() if "Why:" not in doc]
    assert not silent, f"seam functions without a `Why:` in their docstring: {silent}"


def test_each_seam_function_is_exercised_against_the_installed_ray() -> None:
    tree = ast.parse(TOUCHPOINT_TESTS.read_text())
    tests = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    missing = [f for f in _seam_functions() if not any(t.startswith(f"test_{f}") for t in tests)]
    assert not missing, f"no test_<function>... in {TOUCHPOINT_TESTS.name} for {missing}"


# ----- our subclasses of Ray's classes, through `self` -------------------------------------
def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _origins(tree: ast.Module, module: str) -> dict[str, str]:
    """Local name -> dotted origin, for imported names and the module's own classes."""
    origins = {
        node.name: f"{module}.{node.name}" for node in tree.body if isinstance(node, ast.ClassDef)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                origins[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                origins[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return origins


def _base_origin(base: ast.expr, origins: dict[str, str]) -> str:
    root = base
    while isinstance(root, ast.Attribute):
        root = root.value
    name = root.id if isinstance(root, ast.Name) else ""
    return origins.get(name, name)


def ray_derived_classes() -> list[str]:
    """`module.Class` of each class of ours with a Ray, RLlib or Tune class among its bases,
    found without importing: a base imported from `ray`, or another such class of ours."""
    bases: dict[str, list[str]] = {}
    for _, path in _modules():
        module = _module_name(path)
        tree = ast.parse(path.read_text())
        origins = _origins(tree, module)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                bases[f"{module}.{node.name}"] = [_base_origin(b, origins) for b in node.bases]
    derived: set[str] = set()
    while True:
        more = {
            cls
            for cls, origins in bases.items()
            if any(o.split(".")[0] == "ray" or o in derived for o in origins)
        }
        if more == derived:
            return sorted(derived)
        derived = more


@cache
def _ray_private_names(base: type) -> frozenset[str]:
    """The private names a Ray class defines: its own attributes and those its code uses on
    `self` (instance attributes its constructor sets)."""
    names = {name for name in vars(base) if _private(name)}
    try:
        source = textwrap.dedent(inspect.getsource(base))
    except (OSError, TypeError):
        return frozenset(names)
    for node in ast.walk(ast.parse(source)):
        on_self = isinstance(node, ast.Attribute) and ast.unparse(node.value) == "self"
        if on_self and _private(node.attr):
            names.add(node.attr)
    return frozenset(names)


def _class_node(cls: type) -> tuple[str, ast.ClassDef]:
    path = Path(inspect.getfile(cls))
    tree = ast.parse(path.read_text())
    [node] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    return path.relative_to(ROOT).as_posix(), node


def through_self() -> dict[str, dict[str, int]]:
    """File -> {private name of a Ray base class used through self/super(): first line}."""
    found: dict[str, dict[str, int]] = {}
    for dotted in ray_derived_classes():
        module, name = dotted.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        mro = cls.__mro__
        ray_names = set().union(
            *(_ray_private_names(b) for b in mro if b.__module__.split(".")[0] == "ray")
        )
        for ours in (b for b in mro if b.__module__.split(".")[0] == "rl_platform"):
            path, node = _class_node(ours)
            for line, used in _used_through_self(node):
                if used in ray_names:
                    lines = found.setdefault(path, {})
                    lines[used] = min(lines.get(used, line), line)
    return found


def _used_through_self(node: ast.ClassDef) -> Iterator[tuple[int, str]]:
    """(line, name) of each private name the class uses on `self`/`super()`: attributes and
    `getattr(self, "_name")` and its kin."""
    for item in ast.walk(node):
        if isinstance(item, ast.Attribute) and _is_own(item.value) and _private(item.attr):
            yield item.lineno, item.attr
        elif _called(item) in ATTRIBUTE_FUNCTIONS and len(item.args) >= 2:
            receiver, name = item.args[0], item.args[1]
            if _is_own(receiver) and isinstance(name, ast.Constant) and _private(str(name.value)):
                yield item.lineno, str(name.value)


def test_our_subclasses_use_only_the_listed_internals_of_their_bases() -> None:
    found = through_self()
    new = [
        f"{path}:{line}: self.{name}"
        for path, names in sorted(found.items())
        for name, line in sorted(names.items(), key=lambda item: item[1])
        if name not in THROUGH_SELF.get(path, set())
    ]
    gone = [
        f"{path}: {name}"
        for path, names in sorted(THROUGH_SELF.items())
        for name in sorted(names)
        if name not in found.get(path, {})
    ]
    assert not new, "internals of a Ray base class used through self, not in THROUGH_SELF:\n" + (
        "\n".join(new)
    )
    assert not gone, "THROUGH_SELF lists uses that are gone (delete them):\n" + "\n".join(gone)
