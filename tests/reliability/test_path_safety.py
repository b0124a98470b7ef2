"""Check 4: names that become path parts are validated, and a run writes only inside its folder."""

import json
import os

import pytest
import torch
from pydantic import ValidationError
from typer.testing import CliRunner

from rl_platform.base.errors import UnsafePathError
from rl_platform.cli import app
from rl_platform.league import LeaguePool, LeagueSpec, Member, MemberKind
from rl_platform.league.pool import MANIFEST, WEIGHTS_DIR
from rl_platform.utils.names import check_name, safe_join

BAD_NAMES = {
    "parent_escape": "../x",
    "nested_escape": "a/../../x",
    "slash": "a/b",
    "dotdot": "..",
    "dot": ".",
    "absolute": "/etc/passwd",
    "nul": "a\x00b",
    "empty": "",
    "backslash": "..\\x",
    "home": "~root",
    "leading_dash": "-rf",
    "leading_space": " x",
    "newline": "x\ny",
    "too_long": "a" * 129,
}
GOOD_NAMES = ["cartpole_ppo", "main", "main_v12", "main+1", "exp.v2-final", "A" * 128]


@pytest.mark.parametrize("case", sorted(BAD_NAMES))
def test_check_name_and_safe_join_reject_unsafe_names(case, tmp_path):
    name = BAD_NAMES[case]
    with pytest.raises(UnsafePathError):
        check_name(name)
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, name)
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, "ok", name)


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_safe_names_are_accepted_and_stay_inside(name, tmp_path):
    assert check_name(name) == name
    joined = safe_join(tmp_path, name)
    assert joined.parent == tmp_path.resolve()


def test_safe_join_refuses_a_symlink_that_leads_outside(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="escapes"):
        safe_join(root, "link")


# YAML spellings of unsafe experiment names (double quotes allow \0 and \n escapes).
SPEC_NAMES = {
    "parent_escape": '"../x"',
    "slash": '"a/b"',
    "dotdot": '".."',
    "absolute": '"/tmp/owned"',
    "nul": '"a\\0b"',
    "newline": '"a\\nb"',
}


@pytest.mark.parametrize("case", sorted(SPEC_NAMES))
@pytest.mark.parametrize("command", ["validate", "train"])
def test_unsafe_experiment_name_exits_2_and_creates_nothing(case, command, write_spec, tmp_path):
    spec = write_spec(
        f"name: {SPEC_NAMES[case]}\nenv: {{id: CartPole-v1}}\nstop: {{iterations: 1}}\n"
    )
    out = tmp_path / "out" / "runs"
    args = [command, str(spec)] + (["--out", str(out)] if command == "train" else [])
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "name:" in result.output and "folder name" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["../x", "/tmp/owned", "a/b"])
def test_unsafe_name_via_override_exits_2(name, write_spec, tmp_path):
    spec = write_spec("name: ok\nenv: {id: CartPole-v1}\nstop: {iterations: 1}\n")
    out = tmp_path / "runs"
    result = CliRunner().invoke(
        app, ["train", str(spec), "--set", f"name={name}", "--out", str(out)]
    )
    assert result.exit_code == 2, result.output
    assert "name:" in result.output
    assert not out.exists()


# ----- league member ids and other league names --------------------------------------------
LEAGUE_BAD = ["../x", "a/b", "..", "/abs", "a\x00b"]


@pytest.mark.parametrize("bad", LEAGUE_BAD)
def test_league_member_ids_are_validated_before_any_write(bad, tmp_path):
    root = tmp_path / "league"
    with pytest.raises((UnsafePathError, ValidationError)):
        Member(id=bad, kind=MemberKind.MAIN)
    pool = LeaguePool(root)
    with pytest.raises(UnsafePathError):
        pool.add_frozen(member_id=bad, weights={"w": torch.zeros(2)}, parent_id="main")
    assert bad not in pool
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert written == []


@pytest.mark.parametrize("bad", LEAGUE_BAD)
def test_league_spec_names_are_validated(bad):
    with pytest.raises(ValidationError):
        LeagueSpec(scripted=[bad])
    with pytest.raises(ValidationError):
        LeagueSpec(opponent_mix={"self_play": 0.5, bad: 0.5})


@pytest.mark.parametrize("field", ["id", "weights_file", "parent_id"])
def test_tampered_manifest_cannot_smuggle_a_path(field, tmp_path):
    root = tmp_path / "league"
    pool = LeaguePool(root)
    pool.add_member(Member(id="main", kind=MemberKind.MAIN))
    pool.add_frozen(member_id="main_v1", weights={"w": torch.ones(2)}, parent_id="main")
    pool.save()
    secret = tmp_path / "secret.safetensors"
    secret.write_bytes(b"outside the league root")
    manifest = json.loads((root / MANIFEST).read_text())
    record = next(m for m in manifest["members"] if m["id"] == "main_v1")
    record[field] = "../../secret.safetensors" if field == "weights_file" else "../../secret"
    (root / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises((UnsafePathError, ValidationError)):
        LeaguePool.open(root, prune=True)
    assert secret.read_bytes() == b"outside the league root"
    assert (root / WEIGHTS_DIR / "main_v1.safetensors").is_file()  # no pruning happened


def test_export_module_id_is_looked_up_never_joined_into_a_path(smoke_run, tmp_path):
    out = tmp_path / "policy.safetensors"
    result = CliRunner().invoke(
        app, ["export", str(smoke_run.run_dir), str(out), "--module", "../../x"]
    )
    assert result.exit_code == 2, result.output
    assert "not in the checkpoint" in result.output
    assert list(tmp_path.iterdir()) == []


# ----- confinement of a real run ------------------------------------------------------------
def test_every_file_a_run_writes_is_inside_its_run_folder(smoke_run):
    run_dir = smoke_run.run_dir.resolve()
    assert run_dir.parent.parent == smoke_run.out_dir.resolve()
    assert run_dir.parent.name == "reliability_smoke"
    entries = list(smoke_run.out_dir.rglob("*"))
    files = [p for p in entries if p.is_file()]
    # spec, metrics, log, trial metrics, checkpoints and TensorBoard at least
    names = {p.name for p in files}
    assert {"spec.yaml", "metrics.jsonl", "train.log", "trial_metrics.json", "latest"} <= names
    assert any(p.name.startswith("events.out.tfevents") for p in files)
    for path in entries:
        assert not path.is_symlink(), f"{path} is a symlink"
        resolved = path.resolve()
        inside = resolved == run_dir or run_dir in resolved.parents
        assert inside or resolved == run_dir.parent, f"{path} is outside {run_dir}"
    assert os.path.commonpath([str(p.resolve()) for p in files]) == str(run_dir)
