"""What `rlp submit` sends to the cluster: the entrypoint, the runtime env and the auth header.

The entrypoint is run by Ray through `/bin/sh -c`, so these tests run it through a real shell
with a stand-in `rlp` and check that hostile values arrive as literal arguments.
"""

import os
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from rl_platform.base.errors import UserError
from rl_platform.jobs import client as client_mod
from rl_platform.jobs.entrypoint import build_entrypoint, build_train_argv
from rl_platform.jobs.errors import ClusterAuthError, SubmitError
from rl_platform.jobs.runtime_env import (
    EXCLUDES,
    RAY_STOP_WAIT_ENV_VAR,
    STOP_GRACE_ENV_VAR,
    build_runtime_env,
    job_env_vars,
)
from rl_platform.jobs.submit import submit_spec

REPO = Path(__file__).resolve().parents[2]

HOSTILE = [
    "name=x; touch {f}",
    "name=$(touch {f})",
    "name=`touch {f}`",
    "name=x' ; touch {f} ; echo '",
    'name=x" && touch {f} && echo "',
    "name=x\ntouch {f}",
    "name=x | touch {f}",
    "name=${{IFS}}$(touch {f})",
]


def _fake_rlp(tmp_path: Path) -> tuple[Path, Path]:
    """A `rlp` on PATH that writes each argument it receives, NUL-separated, to a file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    args_file = tmp_path / "args.bin"
    script = bin_dir / "rlp"
    script.write_text(f'#!/bin/sh\nprintf "%s\\0" "$@" > "{args_file}"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return bin_dir, args_file


def _run_in_shell(entrypoint: str, bin_dir: Path, cwd: Path) -> None:
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["/bin/sh", "-c", entrypoint], check=True, env=env, cwd=cwd, timeout=30)


@pytest.mark.parametrize("template", HOSTILE)
def test_hostile_values_reach_rlp_as_literal_arguments(tmp_path: Path, template: str) -> None:
    marker = tmp_path / "pwned"
    value = template.format(f=marker)
    bin_dir, args_file = _fake_rlp(tmp_path)
    spec = f"experiments/{template.format(f=marker).replace('/', '_')}.yaml"
    entrypoint = build_entrypoint(spec, overrides=[value, "seed=1"], profile=value, out=value)

    _run_in_shell(entrypoint, bin_dir, tmp_path)

    assert not marker.exists(), f"shell ran injected command from {template!r}"
    received = args_file.read_bytes().split(b"\0")[:-1]
    expected = build_train_argv(spec, overrides=[value, "seed=1"], profile=value, out=value)[1:]
    assert [arg.decode() for arg in received] == expected


def test_argv_layout() -> None:
    argv = build_train_argv("exp/a.yaml", overrides=["a=1", "b=2"], profile="smoke", out="/o")
    assert argv == [
        "rlp", "train", "exp/a.yaml", "--set", "a=1", "--set", "b=2",
        "--profile", "smoke", "--out", "/o",
    ]  # fmt: skip
    assert build_train_argv("a.yaml") == ["rlp", "train", "a.yaml"]


def test_spec_starting_with_dash_is_not_read_as_an_option() -> None:
    assert build_train_argv("--help.yaml")[2] == "./--help.yaml"


def test_nul_bytes_are_refused() -> None:
    with pytest.raises(SubmitError, match="NUL"):
        build_entrypoint("a.yaml", overrides=["a=\x00"])


def test_env_vars_forward_project_settings_but_no_secrets() -> None:
    environ = {
        "RLP_STOP_GRACE_S": "42.5",
        "RLP_LOG_LEVEL": "DEBUG",
        "WANDB_PROJECT": "rlp",
        "WANDB_API_KEY": "secret-value",
        "RLP_SERVICE_TOKEN": "secret-value",
        "RAY_AUTH_TOKEN": "secret-value",
        "HOME": "/root",
    }
    env_vars = job_env_vars(environ)
    assert env_vars == {
        "RLP_STOP_GRACE_S": "42.5",
        "RLP_LOG_LEVEL": "DEBUG",
        "WANDB_PROJECT": "rlp",
        # Ray's SIGKILL comes after the training's own grace window, never before.
        RAY_STOP_WAIT_ENV_VAR: "58",
    }
    assert "secret-value" not in repr(env_vars)


def test_stop_grace_has_a_default_and_rejects_garbage() -> None:
    env_vars = job_env_vars({})
    assert float(env_vars[STOP_GRACE_ENV_VAR]) > 0
    assert int(env_vars[RAY_STOP_WAIT_ENV_VAR]) > float(env_vars[STOP_GRACE_ENV_VAR])
    for bad in ("soon", "-1", "nan", "inf"):
        with pytest.raises(UserError, match=STOP_GRACE_ENV_VAR):
            job_env_vars({STOP_GRACE_ENV_VAR: bad})


def _package_names(root: Path, runtime_env: dict[str, Any], tmp_path: Path) -> set[str]:
    """Zip `root` exactly the way Ray uploads a working_dir and list what went in."""
    from ray._private.runtime_env.packaging import create_package

    target = tmp_path / "pkg.zip"
    create_package(str(root), target, include_gitignore=True, excludes=runtime_env["excludes"])
    with zipfile.ZipFile(target) as zf:
        return set(zf.namelist())


def test_upload_leaves_out_outputs_envs_and_token_files(tmp_path: Path) -> None:
    work = tmp_path / "work"
    for rel in [
        "experiments/a.yaml",
        "rl_platform/x.py",
        "runs/a/1/checkpoints/c.pt",
        "checkpoints/c.pt",
        "wandb/run/x",
        ".venv/bin/python",
        ".git/config",
        ".env",
        "cluster.token",
        "sub/auth_token",
        "notes/private.md",
    ]:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text("x")
    # Ray 2.60 reads .rayignore itself; a pattern only listed there must stay out too.
    (work / ".rayignore").write_text("notes/\n")
    runtime_env = build_runtime_env(working_dir=work, environ={})

    names = {n.rstrip("/") for n in _package_names(work, runtime_env, tmp_path)}

    assert {"experiments/a.yaml", "rl_platform/x.py"} <= names
    leaked = [n for n in names if n.split("/")[0] in {"runs", "checkpoints", "wandb", ".venv"}]
    leaked += [n for n in names if n.startswith((".git", ".env", "notes")) or "token" in n]
    assert leaked == []


def test_repo_rayignore_and_excludes_keep_the_real_upload_clean(tmp_path: Path) -> None:
    names = _package_names(REPO, build_runtime_env(working_dir=REPO, environ={}), tmp_path)
    assert "pyproject.toml" in names and ".rayignore" in names
    banned = (".venv/", "runs/", ".git/", "wandb/", "checkpoints/")
    assert [n for n in names if n.startswith(banned) or n.endswith("auth_token")] == []
    assert set(EXCLUDES) >= {"runs/", ".venv", ".env", "*.token", "auth_token", ".git"}


class _FakeClient:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def submit_job(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        return "raysubmit_test"


def test_submit_spec_sends_relative_spec_quoted_entrypoint_and_runtime_env(tmp_path: Path) -> None:
    spec = tmp_path / "experiments" / "a b.yaml"
    spec.parent.mkdir()
    spec.write_text("name: a\n")
    fake = _FakeClient()
    submission = submit_spec(
        client=fake,  # type: ignore[arg-type]
        spec=spec,
        overrides=["name=x; touch y"],
        profile="smoke",
        working_dir=tmp_path,
        environ={"WANDB_API_KEY": "k", "RLP_X": "1"},
    )
    assert submission.job_id == "raysubmit_test"
    [call] = fake.calls
    assert call["entrypoint"] == (
        "rlp train 'experiments/a b.yaml' --set 'name=x; touch y' --profile smoke"
    )
    assert call["runtime_env"]["working_dir"] == str(tmp_path.resolve())
    assert call["runtime_env"]["env_vars"]["RLP_X"] == "1"
    assert "WANDB_API_KEY" not in call["runtime_env"]["env_vars"]
    # Stored runs record it, so `rlp pull JOB_ID --from STORAGE` finds them.
    assert call["runtime_env"]["env_vars"]["RLP_JOB_ID"] == call["submission_id"]


def test_submit_spec_refuses_missing_or_outside_specs(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text("name: a\n")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SubmitError, match="outside the working folder"):
        submit_spec(client=_FakeClient(), spec=outside, working_dir=work)  # type: ignore[arg-type]
    with pytest.raises(SubmitError, match="does not exist"):
        submit_spec(client=_FakeClient(), spec=work / "nope.yaml", working_dir=work)  # type: ignore[arg-type]


def test_token_sources_follow_rays_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    assert client_mod.read_token() is None

    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("from-home\n")
    assert client_mod.read_token() == "from-home"

    path_token = tmp_path / "t"
    path_token.write_text("from-path")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(path_token))
    assert client_mod.read_token() == "from-path"

    monkeypatch.setenv("RAY_AUTH_TOKEN", "from-env")
    assert client_mod.read_token() == "from-env"

    monkeypatch.delenv("RAY_AUTH_TOKEN")
    path_token.write_text("")
    with pytest.raises(ClusterAuthError, match="RAY_AUTH_TOKEN_PATH"):
        client_mod.read_token()


def test_make_client_sends_bearer_header_to_the_explicit_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from rl_platform.jobs import bounded_client

    seen: dict[str, Any] = {}

    class Recorder:
        def __init__(self, address: str, headers: dict[str, str]) -> None:
            seen.update(address=address, headers=headers, env=os.environ.get("RAY_ADDRESS"))

    # The client class `make_client` builds (a bounded `JobSubmissionClient`), replaced
    # whatever imported it first: patching Ray's class would miss a subclass made before.
    monkeypatch.setattr(bounded_client, "BoundedJobClient", Recorder)
    monkeypatch.setenv("RAY_AUTH_TOKEN", "tok")
    monkeypatch.setenv("RAY_ADDRESS", "http://elsewhere:8265")

    client_mod.make_client("http://127.0.0.1:9999")

    # Ray lets RAY_ADDRESS override the argument; it is hidden while the client is built.
    assert seen == {
        "address": "http://127.0.0.1:9999",
        "headers": {"Authorization": "Bearer tok"},
        "env": None,
    }
    assert os.environ["RAY_ADDRESS"] == "http://elsewhere:8265"
    assert client_mod.resolve_address(None) == "http://elsewhere:8265"
    monkeypatch.delenv("RAY_ADDRESS")
    assert client_mod.resolve_address(None) == "http://127.0.0.1:8265"


def test_jobs_cli_refuses_job_ids_that_are_not_ids() -> None:
    from typer.testing import CliRunner

    from rl_platform.commands.jobs import jobs_app

    result = CliRunner().invoke(jobs_app, ["status", "../../api/[x]"])
    # A user error: one line, exit code 2, no traceback.
    assert result.exit_code == 2
    assert "'../../api/[x]' is not a job id" in result.output
    assert "Traceback" not in result.output


class _AgentNotReadyYet(_FakeClient):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def submit_job(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        if len(self.calls) <= self.failures:
            raise RuntimeError("Request failed with status code 500: No available agent to ...")
        return kwargs["submission_id"]


def test_submission_waits_for_the_job_agent_with_one_fixed_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rl_platform.jobs.submit as submit_mod

    monkeypatch.setattr(submit_mod.time, "sleep", lambda _s: None)
    spec = tmp_path / "a.yaml"
    spec.write_text("name: a\n")
    fake = _AgentNotReadyYet(failures=2)
    submission = submit_spec(client=fake, spec=spec, working_dir=tmp_path)  # type: ignore[arg-type]
    ids = {call["submission_id"] for call in fake.calls}
    assert len(fake.calls) == 3 and ids == {submission.job_id}
    assert submission.job_id.startswith("rlp_")


def test_other_submission_errors_are_not_retried(tmp_path: Path) -> None:
    class Broken(_FakeClient):
        def submit_job(self, **kwargs: Any) -> str:
            self.calls.append(kwargs)
            raise RuntimeError("Request failed with status code 400: bad runtime_env")

    spec = tmp_path / "a.yaml"
    spec.write_text("name: a\n")
    broken = Broken()
    with pytest.raises(RuntimeError, match="bad runtime_env"):
        submit_spec(client=broken, spec=spec, working_dir=tmp_path)  # type: ignore[arg-type]
    assert len(broken.calls) == 1


class _StreamingClient:
    """Stands in for JobSubmissionClient in `rlp submit`: streams two chunks, then `after`."""

    def __init__(self, after: BaseException | None, final: str) -> None:
        self.after, self.final, self.stopped = after, final, False

    def submit_job(self, **kwargs: Any) -> str:
        return kwargs["submission_id"]

    async def tail_job_logs(self, job_id: str) -> Any:
        yield "iteration 1\n"
        yield "iteration 2\n"
        if self.after is not None:
            raise self.after

    def get_job_status(self, job_id: str) -> Any:
        from ray.job_submission import JobStatus

        return JobStatus(self.final)

    def stop_job(self, job_id: str) -> bool:
        self.stopped = True
        return True


@pytest.mark.parametrize(
    "after, final, exit_code, says",
    [
        (None, "SUCCEEDED", 0, "SUCCEEDED"),
        (None, "FAILED", 1, "FAILED"),
        (KeyboardInterrupt(), "RUNNING", 0, "detached"),
    ],
)
def test_submit_streams_logs_and_ctrl_c_detaches_without_stopping(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    after: BaseException | None,
    final: str,
    exit_code: int,
    says: str,
) -> None:
    import typer
    from typer.testing import CliRunner

    from rl_platform.commands import jobs as jobs_cli

    fake = _StreamingClient(after, final)
    monkeypatch.setattr(jobs_cli, "make_client", lambda address: fake)
    monkeypatch.chdir(tmp_path)
    Path("a.yaml").write_text("name: a\n")
    app = typer.Typer()
    app.command()(jobs_cli.submit_command)

    result = CliRunner().invoke(app, ["a.yaml", "--profile", "smoke"])

    assert result.exit_code == exit_code, result.output
    assert "iteration 1\niteration 2\n" in result.output
    assert says in result.output
    assert not fake.stopped


def test_seeds_pass_through_to_the_jobs_rlp_train(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import typer
    from typer.testing import CliRunner

    from rl_platform.commands import jobs as jobs_cli

    assert build_train_argv("a.yaml", profile="smoke", seeds="0,4,7") == [
        "rlp", "train", "a.yaml", "--profile", "smoke", "--seeds", "0,4,7",
    ]  # fmt: skip
    with pytest.raises(UserError, match="--seeds '3; touch x'"):
        build_train_argv("a.yaml", seeds="3; touch x")
    fake = _FakeClient()
    monkeypatch.setattr(jobs_cli, "make_client", lambda address: fake)
    monkeypatch.chdir(tmp_path)
    Path("a.yaml").write_text("name: a\n")
    app = typer.Typer()
    app.command()(jobs_cli.submit_command)

    result = CliRunner().invoke(app, ["a.yaml", "--profile", "smoke", "--seeds", "3", "--no-wait"])

    assert result.exit_code == 0, result.output
    [call] = fake.calls
    assert call["entrypoint"] == "rlp train a.yaml --profile smoke --seeds 3"
    refused = CliRunner().invoke(app, ["a.yaml", "--seeds", "1", "--no-wait"])
    assert refused.exit_code == 2 and "--seeds '1'" in refused.output
    assert "Traceback" not in refused.output and len(fake.calls) == 1
