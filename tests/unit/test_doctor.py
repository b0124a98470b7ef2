"""`rlp doctor`: each check on a fake environment, secrets never shown, exit codes."""

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.evaluation.doctor import (
    Status,
    check_mujoco,
    check_python,
    check_ray,
    check_ray_auth,
    check_wandb,
    run_checks,
)

SECRET = "s3cr3t-token-value-0123456789"


def _token_file(home: Path, *, mode: int = 0o600) -> Path:
    path = home / ".ray" / "auth_token"
    path.parent.mkdir(parents=True)
    path.write_text(SECRET + "\n")
    path.chmod(mode)
    return path


def test_ray_auth_reports_presence_never_the_token(tmp_path: Path) -> None:
    env = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": SECRET}
    check = check_ray_auth(env, tmp_path)
    assert check.status == Status.OK and "RAY_AUTH_TOKEN set" in check.detail
    assert SECRET not in repr(check)
    _token_file(tmp_path)
    from_file = check_ray_auth({"RAY_AUTH_MODE": "token"}, tmp_path)
    assert from_file.status == Status.OK and "auth_token: present" in from_file.detail
    assert SECRET not in repr(from_file)


def test_ray_auth_failures_say_how_to_fix(tmp_path: Path) -> None:
    missing = check_ray_auth({"RAY_AUTH_MODE": "token"}, tmp_path)
    assert missing.status == Status.FAIL and "~/.ray/auth_token" in missing.fix
    bad_path = check_ray_auth({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "nope")}, tmp_path)
    assert bad_path.status == Status.FAIL and "RAY_AUTH_TOKEN_PATH" in bad_path.fix
    path = _token_file(tmp_path, mode=0o644)
    loose = check_ray_auth({}, tmp_path)
    assert loose.status == Status.WARN and loose.fix == f"chmod 600 {path}"
    assert check_ray_auth({}, tmp_path / "empty_home").status == Status.OK  # auth not in use


def test_python_ray_and_wandb_checks(tmp_path: Path) -> None:
    assert check_python((3, 11)).status == Status.OK
    assert check_python((3, 10)).status == Status.FAIL
    assert check_python((3, 13)).status == Status.FAIL
    assert check_ray().status == Status.OK  # the pinned ray is installed here
    offline = check_wandb({"WANDB_MODE": "offline"}, tmp_path)
    assert offline.status == Status.OK and "API key absent" in offline.detail
    online = check_wandb({}, tmp_path)
    assert online.status == Status.WARN and "wandb login" in online.fix
    (tmp_path / ".netrc").write_text(f"machine api.wandb.ai\n  login user\n  password {SECRET}\n")
    logged_in = check_wandb({}, tmp_path)
    assert logged_in.status == Status.OK and "API key present" in logged_in.detail
    assert SECRET not in repr(logged_in)


def test_mujoco_check_reports_a_broken_backend() -> None:
    broken = check_mujoco({**os.environ, "MUJOCO_GL": "no-such-backend"})
    assert broken.status == Status.FAIL
    assert "MUJOCO_GL=no-such-backend" in broken.detail and "MUJOCO_GL=" in broken.fix


def test_run_checks_skips(tmp_path: Path) -> None:
    checks = run_checks(environ={}, home=tmp_path, skip=frozenset({"mujoco", "atari", "torch"}))
    assert [c.name for c in checks] == ["python", "ray", "wandb", "ray token auth"]


@pytest.fixture
def token_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    return tmp_path


def test_doctor_cli_is_informational_unless_strict(token_env: Path) -> None:
    runner = CliRunner()
    skip = ["--skip", "mujoco", "--skip", "atari"]
    table = runner.invoke(app, ["doctor", *skip])
    assert table.exit_code == 0 and "ray token auth" in table.stdout and "fail" in table.stdout
    strict = runner.invoke(app, ["doctor", "--strict", *skip])
    assert strict.exit_code == 1
    _token_file(token_env)
    fixed = runner.invoke(app, ["doctor", "--strict", "--json", *skip])
    assert fixed.exit_code == 0, fixed.stdout
    rows = {row["name"]: row for row in json.loads(fixed.stdout)}
    assert rows["ray token auth"]["status"] == "ok" and SECRET not in fixed.stdout
    assert rows["python"]["status"] == "ok" and "cuda" in rows
    unknown = runner.invoke(app, ["doctor", "--skip", "gpu"])
    assert unknown.exit_code == 2 and "known checks" in unknown.stderr
