"""Checks 13 and 14: the Ray job API needs the token, `rlp submit` works with it and never
leaks it, and hostile `--set` values never reach a shell.

Runs against the session's real token-auth Ray head (tests/token_head.py), shared with the
`rlp submit` feature tests in tests/integration/test_submit.py.
"""

import json
import secrets
import shlex
from pathlib import Path

from typer.testing import CliRunner

from rl_platform.commands.jobs import jobs_app
from rl_platform.jobs.client import make_client
from rl_platform.jobs.errors import ClusterAuthError
from tests.token_head import (
    SPEC,
    TOKEN_HEAD,
    Head,
    SmokeJob,
    client_env,
    http_status,
    rlp_submit,
    wait_terminal,
)

BACKGROUND = [TOKEN_HEAD]  # the head starts beside the rest of the suite


def test_job_api_requires_the_token(ray_head: Head) -> None:
    url = f"{ray_head.url}/api/jobs/"
    assert http_status(url, None) == 401
    assert http_status(url, "not-the-token") == 403
    assert http_status(url, ray_head.token) == 200


def test_cli_turns_a_wrong_token_into_a_user_error_without_echoing_it(ray_head: Head) -> None:
    wrong = secrets.token_hex(32)
    with client_env(ray_head, token=wrong):
        result = CliRunner().invoke(jobs_app, ["list", "--address", ray_head.url])
    assert result.exit_code == ClusterAuthError.exit_code == 2
    assert "refused" in result.output and "Traceback" not in result.output
    assert wrong not in result.output
    assert ray_head.token not in result.output


def test_rlp_submit_works_with_the_token_and_never_leaks_it(
    ray_head: Head, smoke_job: SmokeJob
) -> None:
    result = smoke_job.result
    printed = result.stdout + result.stderr
    assert result.returncode == 0, printed[-4000:]
    assert "SUCCEEDED" in result.stderr
    checkpoints = list(smoke_job.out.glob("*/*/checkpoints/*"))
    assert checkpoints, f"no checkpoint under {smoke_job.out}:\n{printed[-3000:]}"

    job_id = smoke_job.job_id
    with client_env(ray_head):
        client = make_client(ray_head.url)
        job_logs = client.get_job_logs(job_id)
        list_result = CliRunner().invoke(jobs_app, ["list", "--address", ray_head.url])
        status_result = CliRunner().invoke(jobs_app, ["status", job_id, "--address", ray_head.url])
    assert job_id in list_result.output
    assert status_result.output.startswith("SUCCEEDED")
    for text in (printed, job_logs, list_result.output, status_result.output):
        assert ray_head.token not in text
    # Stored: nothing in the run folder (spec.yaml, logs, metrics, checkpoints, W&B offline
    # files, TensorBoard) holds the token.
    token = ray_head.token.encode()
    files = [path for path in smoke_job.out.rglob("*") if path.is_file()]
    assert any(path.name == "spec.yaml" for path in files)
    assert [path for path in files if token in path.read_bytes()] == []


def test_rlp_submit_never_lets_values_reach_a_shell(ray_head: Head, tmp_path: Path) -> None:
    markers = [tmp_path / f"pwned{i}" for i in range(3)]
    hostile = [
        f"name=x; touch {markers[0]}",
        f"name=$(touch {markers[1]})",
        f"name=`touch {markers[2]}`",
    ]
    args = [arg for value in hostile for arg in ("--set", value)]
    result = rlp_submit(ray_head, SPEC, *args, "--profile", "smoke", "--no-wait", timeout_s=120)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    job_id = result.stdout.splitlines()[0].strip()

    wait_terminal(ray_head, job_id, timeout_s=300)
    assert [m for m in markers if m.exists()] == []
    with client_env(ray_head):
        info = make_client(ray_head.url).get_job_info(job_id)
    assert shlex.split(info.entrypoint)[2:] == [SPEC, *args, "--profile", "smoke"]
    assert json.dumps(info.runtime_env).count(ray_head.token) == 0
