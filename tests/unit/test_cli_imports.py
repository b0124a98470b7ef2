"""`rlp --help`, `rlp envs` and `rlp validate` start without the training stack.

Each command runs through the Typer app in a fresh interpreter, which then reports what it
imported. Ray and torch cost seconds on a small machine and none of these commands uses them;
`--help` and `envs` do not read a spec either, so the spec schema and what it pulls in
(Gymnasium, NumPy, OmegaConf: ~0.5 s without a bytecode cache) stay out too. A module-level
import of any of them anywhere in the CLI's import chain fails here (docs/training.md,
"Start-up").
"""

import json
import subprocess
import sys

import pytest

from tests.conftest import EXPERIMENTS, REPO_ROOT

TRAINING_STACK = ("torch", "ray")
SPEC_STACK = ("rl_platform.spec", "gymnasium", "numpy", "omegaconf")

_PROBE = """
import json, sys
from typer.testing import CliRunner
from rl_platform.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
print(json.dumps({
    "exit_code": result.exit_code,
    "output": result.output[-2000:],
    "exception": repr(result.exception),
    "modules": sorted(sys.modules),
}))
"""


def _modules_after(*args: str) -> set[str]:
    """The modules a fresh interpreter holds after running `rlp ARGS` (which must succeed)."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=REPO_ROOT,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["exit_code"] == 0, (report["output"], report["exception"])
    return set(report["modules"])


def _loaded(modules: set[str], roots: tuple[str, ...]) -> list[str]:
    return sorted(r for r in roots if any(m == r or m.startswith(r + ".") for m in modules))


@pytest.mark.parametrize(
    ("args", "absent"),
    [
        (("--help",), TRAINING_STACK + SPEC_STACK),
        (("envs",), TRAINING_STACK + SPEC_STACK),
        (("validate", str(EXPERIMENTS / "cartpole_ppo.yaml")), TRAINING_STACK),
    ],
    ids=["help", "envs", "validate"],
)
def test_light_commands_do_not_import_the_training_stack(args, absent):
    assert _loaded(_modules_after(*args), absent) == []


def test_the_probe_sees_what_a_command_imports():
    """The check is real: `rlp validate` reads a spec, so the spec stack shows up."""
    modules = _modules_after("validate", str(EXPERIMENTS / "cartpole_ppo.yaml"))
    assert _loaded(modules, SPEC_STACK) == sorted(SPEC_STACK)


def test_the_package_still_exports_load_spec_and_train():
    import rl_platform
    from rl_platform.spec import load_spec

    assert rl_platform.load_spec is load_spec
    assert "train" in rl_platform.__all__
