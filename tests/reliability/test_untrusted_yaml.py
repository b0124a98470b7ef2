"""Check 2: specs are plain data. YAML tags are refused before anything is constructed, the
payload never runs, and no unsafe deserializer is used anywhere in rl_platform."""

import ast
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.utils import safe_yaml
from tests.reliability.support import REPO, RLP, child_env

OK = "name: demo\nenv: {id: CartPole-v1}\nstop: {iterations: 1}\n"

# Each payload would create `{marker}` if any loader constructed it.
PAYLOADS = {
    "object_apply_os_system": '!!python/object/apply:os.system ["touch {marker}"]',
    "object_apply_check_call": "!!python/object/apply:subprocess.check_call [[touch, '{marker}']]",
    "object_new_popen": '!!python/object/new:subprocess.Popen [["touch", "{marker}"]]',
    "name_reference": "!!python/name:os.system",
    "module_reference": "!!python/module:os",
    "object_state": '!!python/object:argparse.Namespace {{x: "{marker}"}}',
    "local_tag": "!include /etc/passwd",
    "binary": "!!binary aGVsbG8=",
    "set": "!!set {{a, b}}",
}


def _spec_with_payload(payload: str) -> str:
    return OK + f"vars:\n  payload: {payload}\n"


@pytest.mark.parametrize("case", sorted(PAYLOADS))
@pytest.mark.parametrize("command", ["validate", "train"])
def test_tagged_yaml_is_refused_and_never_runs(case, command, write_spec, tmp_path):
    marker = tmp_path / "pwned"
    spec = write_spec(_spec_with_payload(PAYLOADS[case].format(marker=marker)))
    args = [command, str(spec)] + (["--out", str(tmp_path / "runs")] if command == "train" else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "not allowed in specs" in result.output and "line 5" in result.output
    assert "Traceback" not in result.output
    assert not marker.exists(), "the YAML payload ran"
    assert not (tmp_path / "runs").exists()


def test_the_payload_is_live_under_an_unsafe_loader(tmp_path):
    """Proves the payloads above are real: PyYAML's unsafe loader runs this one."""
    marker = tmp_path / "pwned"
    yaml.unsafe_load(_spec_with_payload(PAYLOADS["object_apply_os_system"].format(marker=marker)))
    assert marker.exists()


def test_tag_in_an_included_base_file_is_refused(write_spec, tmp_path):
    marker = tmp_path / "pwned"
    write_spec(
        _spec_with_payload(PAYLOADS["object_apply_os_system"].format(marker=marker)), "b.yaml"
    )
    spec = write_spec("_base: b.yaml\nseed: 1\n", "top.yaml")
    result = CliRunner().invoke(app, ["validate", str(spec)])
    assert result.exit_code == 2, result.output
    assert "b.yaml" in result.output and "not allowed" in result.output
    assert not marker.exists()


def test_tag_in_a_set_override_stays_an_inert_string(write_spec, tmp_path):
    marker = tmp_path / "pwned"
    payload = PAYLOADS["object_apply_os_system"].format(marker=marker)
    result = CliRunner().invoke(
        app, ["validate", str(write_spec(OK)), "--set", f"vars.payload={payload}"]
    )
    assert result.exit_code == 0, result.output
    assert safe_yaml.parse_yaml(result.output)["vars"]["payload"] == payload
    assert not marker.exists()


def test_real_rlp_validate_subprocess_never_runs_the_payload(write_spec, tmp_path):
    marker = tmp_path / "pwned"
    spec = write_spec(_spec_with_payload(PAYLOADS["object_apply_os_system"].format(marker=marker)))
    proc = subprocess.run(
        [str(RLP), "validate", str(spec)],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "not allowed in specs" in proc.stderr and "Traceback" not in proc.stderr
    assert not marker.exists()


def test_the_audited_loader_builds_plain_data_only():
    assert issubclass(safe_yaml._PlainDataLoader, yaml.SafeLoader)
    data = safe_yaml.parse_yaml("a: [1, 2.5e-3, true, null, off, 2024-01-01]\n")
    assert data == {"a": [1, 0.0025, True, None, "off", "2024-01-01"]}
    with pytest.raises(safe_yaml.YamlTagError):
        safe_yaml.parse_yaml("a: !!str x\nb: !!python/tuple [1]\n")


# ----- code scan ---------------------------------------------------------------------------
AUDITED = {Path("rl_platform/utils/safe_yaml.py")}
YAML_UNSAFE = {"load", "load_all", "unsafe_load", "unsafe_load_all", "full_load", "full_load_all"}
YAML_UNSAFE_LOADERS = {"Loader", "UnsafeLoader", "FullLoader"}
PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "cloudpickle", "dill", "joblib", "marshal"}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _keyword_is_true(call: ast.Call, name: str) -> bool:
    return any(
        kw.arg == name and isinstance(kw.value, ast.Constant) and kw.value.value is True
        for kw in call.keywords
    )


def unsafe_deserialization(source: str) -> list[str]:
    """Lines that deserialize with yaml/pickle/torch/numpy in a way that can run code."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> real dotted name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                aliases[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        name = _dotted(node.func) if isinstance(node, ast.Call) else _dotted(node)
        if not name:
            continue
        head, _, rest = name.partition(".")
        real = f"{aliases.get(head, head)}.{rest}" if rest else aliases.get(head, head)
        module, _, attr = real.rpartition(".")
        bad = (
            (module == "yaml" and attr in YAML_UNSAFE | YAML_UNSAFE_LOADERS)
            or (set(module.split(".")) & PICKLE_MODULES and attr in {"load", "loads", "Unpickler"})
            or (module == "shelve" and attr == "open")
            or (
                isinstance(node, ast.Call)
                and real == "torch.load"
                and not _keyword_is_true(node, "weights_only")
            )
            or (
                isinstance(node, ast.Call)
                and real in {"numpy.load", "np.load"}
                and _keyword_is_true(node, "allow_pickle")
            )
        )
        if bad:
            found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return sorted(set(found))


@pytest.mark.parametrize(
    "snippet",
    [
        "import yaml\nyaml.load(t)",
        "import yaml\nyaml.load(t, Loader=yaml.Loader)",
        "import yaml as y\ny.unsafe_load(t)",
        "from yaml import full_load\nfull_load(t)",
        "import pickle\npickle.loads(b)",
        "from pickle import load\nload(f)",
        "import cloudpickle\ncloudpickle.load(f)",
        "import ray\nray.cloudpickle.loads(b)",
        "import torch\ntorch.load(p)",
        "import torch\ntorch.load(p, weights_only=False)",
        "import numpy as np\nnp.load(p, allow_pickle=True)",
    ],
)
def test_scanner_flags_unsafe_deserialization(snippet):
    assert unsafe_deserialization(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "import yaml\nyaml.safe_load(t)\nyaml.safe_dump(d)",
        "import torch\ntorch.load(p, weights_only=True)",
        "import numpy as np\nnp.load(p)",
        "import json\njson.loads(t)",
        "from safetensors.torch import load\nload(b)",
    ],
)
def test_scanner_accepts_safe_deserialization(snippet):
    assert unsafe_deserialization(snippet) == []


def test_no_unsafe_deserialization_in_rl_platform_outside_the_audited_module():
    files = sorted((REPO / "rl_platform").rglob("*.py"))
    assert len(files) > 20
    offenders = {}
    for path in files:
        relative = path.relative_to(REPO)
        if relative in AUDITED:
            continue
        found = unsafe_deserialization(path.read_text(encoding="utf-8"))
        if found:
            offenders[str(relative)] = found
    assert offenders == {}


def test_the_audited_module_loads_yaml_only_with_the_tag_refusing_loader():
    source = (REPO / "rl_platform/utils/safe_yaml.py").read_text(encoding="utf-8")
    calls = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)]
    loading = {"yaml.load", "yaml.load_all", "yaml.unsafe_load", "yaml.full_load"}
    assert [_dotted(c.func) for c in calls if _dotted(c.func) in loading] == []
    # Documents are built node by node by the tag-refusing loader, after the alias budget check.
    constructed = [c for c in calls if _dotted(c.func) == "_PlainDataLoader"]
    assert len(constructed) == 1
