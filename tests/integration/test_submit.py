"""`rlp submit` against a real local Ray head with token authentication on.

The head gets its own temp dir and ports and is stopped by killing only its own process tree
(never `ray stop`, which would take down every Ray on the machine, other sessions' included).
"""

import contextlib
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.jobs.client import make_client
from rl_platform.jobs.errors import ClusterAuthError
from rl_platform.jobs.jobs_cli import jobs_app
from rl_platform.jobs.runtime_env import EXCLUDES, job_env_vars
from tests.integration.ray_head_support import START_ATTEMPTS, free_port, kill_scoped

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SPEC = "experiments/cartpole_ppo.yaml"


@dataclass(frozen=True)
class Head:
    url: str
    token: str
    home: Path

    def client_env(self, token: str | None = None) -> dict[str, str]:
        """Environment for a client process: its own HOME, the token only via the env var."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
        env.update(HOME=str(self.home), RAY_AUTH_TOKEN=token or self.token)
        return env


def _get(url: str, token: str | None) -> int:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _ready(proc: subprocess.Popen, head: Head, log: Path, *, attempt: int) -> bool:
    """True once the job API answers and runs a no-op job (its agent registers after the API
    comes up); False if `ray start` died or hung and another attempt is left."""
    deadline = time.monotonic() + 240
    last_error: Exception | None = None
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with _client_env(head):
                client = make_client(head.url)
                job_id = client.submit_job(entrypoint="true")
                while not client.get_job_status(job_id).is_terminal():
                    time.sleep(0.5)
            return True
        except Exception as exc:  # warm-up: not listening yet, "No available agent", resets
            last_error = exc
            time.sleep(1)
    if attempt < START_ATTEMPTS:  # died or hung: start afresh on new ports
        return False
    tail = log.read_text(errors="replace")[-3000:]
    pytest.fail(f"local Ray head did not come up ({last_error!r}):\n{tail}")


def _launch(temp_dir: str, token: str) -> tuple[subprocess.Popen, str]:
    """Start `ray start --head --block` on fresh ports; return it and its dashboard URL."""
    dashboard_port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, RAY_USAGE_STATS_ENABLED="0")
    # The raylet waits this long for its dashboard agent to report a port; the agent is a heavy
    # Python import that misses the default on a busy 2-core machine.
    env["RAY_raylet_start_wait_time_s"] = "120"
    # fmt: off
    cmd = [
        str(BIN / "ray"), "start", "--head", "--block", f"--temp-dir={temp_dir}",
        f"--port={free_port()}", "--num-cpus=2", "--object-store-memory=300000000",
        "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard_port}",
        f"--ray-client-server-port={free_port()}",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--dashboard-agent-grpc-port={free_port()}",
        f"--runtime-env-agent-port={free_port()}",
        f"--metrics-export-port={free_port()}",
        "--disable-usage-stats",
    ]
    # fmt: on
    with (Path(temp_dir) / "ray-start.log").open("w") as log:
        proc = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    return proc, f"http://127.0.0.1:{dashboard_port}"


@pytest.fixture(scope="module")
def ray_head() -> Iterator[Head]:
    token = secrets.token_hex(32)
    for attempt in range(1, START_ATTEMPTS + 1):
        temp_dir = tempfile.mkdtemp(prefix="rlp-sub-", dir="/tmp")  # short: unix socket paths
        home = Path(temp_dir) / "home"
        home.mkdir()
        proc, url = _launch(temp_dir, token)
        head = Head(url=url, token=token, home=home)
        try:
            if _ready(proc, head, Path(temp_dir) / "ray-start.log", attempt=attempt):
                yield head
                return
        finally:
            kill_scoped(proc, temp_dir)
            shutil.rmtree(temp_dir, ignore_errors=True)


@contextlib.contextmanager
def _client_env(head: Head, token: str | None = None) -> Iterator[None]:
    """Run in-process client code with the head's client environment."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(head.client_env(token))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _wait_terminal(head: Head, job_id: str, timeout_s: float) -> str:
    with _client_env(head):
        client = make_client(head.url)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = client.get_job_status(job_id)
            if status.is_terminal():
                return status.value
            time.sleep(1)
    pytest.fail(f"job {job_id} did not finish within {timeout_s} s")


def _rlp_submit(head: Head, *args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "rlp"), "submit", *args, "--address", head.url],
        cwd=REPO,
        env=head.client_env(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def test_job_api_requires_the_token(ray_head: Head) -> None:
    url = f"{ray_head.url}/api/jobs/"
    assert _get(url, None) == 401
    assert _get(url, "not-the-token") == 403
    assert _get(url, ray_head.token) == 200


def test_cli_turns_a_wrong_token_into_a_user_error_without_echoing_it(ray_head: Head) -> None:
    wrong = secrets.token_hex(32)
    with _client_env(ray_head, token=wrong):
        result = CliRunner().invoke(jobs_app, ["list", "--address", ray_head.url])
    assert result.exit_code == ClusterAuthError.exit_code == 2
    assert "refused" in result.output and "Traceback" not in result.output
    assert wrong not in result.output
    assert ray_head.token not in result.output


TRAP_SIGTERM = textwrap.dedent(
    """
    import signal, sys, time
    def on_term(*_):
        time.sleep(5)  # longer than Ray's default 3 s stop wait
        open(sys.argv[1], "w").write("final checkpoint")
        sys.exit(0)
    signal.signal(signal.SIGTERM, on_term)
    print("ready", flush=True)
    time.sleep(120)
    """
)


def test_stop_gives_the_job_the_configured_grace_period(ray_head: Head, tmp_path: Path) -> None:
    marker = tmp_path / "final.txt"
    with _client_env(ray_head):
        client = make_client(ray_head.url)
        job_id = client.submit_job(
            entrypoint=shlex.join([sys.executable, "-c", TRAP_SIGTERM, str(marker)]),
            runtime_env={"env_vars": job_env_vars({"RLP_STOP_GRACE_S": "8"})},
        )
        deadline = time.monotonic() + 90
        while "ready" not in client.get_job_logs(job_id) and time.monotonic() < deadline:
            time.sleep(0.5)
        result = CliRunner().invoke(jobs_app, ["stop", job_id, "--address", ray_head.url])
    assert result.exit_code == 0, result.output
    assert "has 8 s to write a final checkpoint" in result.output
    assert "after 23 s" in result.output  # RLP_STOP_GRACE_S + 15
    assert _wait_terminal(ray_head, job_id, timeout_s=60) == "STOPPED"
    assert marker.read_text() == "final checkpoint"


@dataclass(frozen=True)
class SmokeJob:
    job_id: str
    out: Path
    result: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def smoke_job(ray_head: Head, tmp_path_factory: pytest.TempPathFactory) -> SmokeJob:
    """`rlp submit` of the smoke profile, run once for the tests that inspect it."""
    out = tmp_path_factory.mktemp("smoke") / "runs"
    result = _rlp_submit(ray_head, SPEC, "--profile", "smoke", "--out", str(out), timeout_s=480)
    job_id = result.stdout.splitlines()[0].strip() if result.stdout else ""
    return SmokeJob(job_id=job_id, out=out, result=result)


def test_rlp_submit_smoke_run_succeeds_and_checkpoints(ray_head: Head, smoke_job: SmokeJob) -> None:
    result = smoke_job.result
    printed = result.stdout + result.stderr
    assert result.returncode == 0, printed[-4000:]
    assert "SUCCEEDED" in result.stderr
    checkpoints = list(smoke_job.out.glob("*/*/checkpoints/*"))
    assert checkpoints, f"no checkpoint under {smoke_job.out}:\n{printed[-3000:]}"

    job_id = smoke_job.job_id
    with _client_env(ray_head):
        client = make_client(ray_head.url)
        job_logs = client.get_job_logs(job_id)
        list_result = CliRunner().invoke(jobs_app, ["list", "--address", ray_head.url])
        status_result = CliRunner().invoke(jobs_app, ["status", job_id, "--address", ray_head.url])
    assert job_id in list_result.output
    assert status_result.output.startswith("SUCCEEDED")
    for text in (printed, job_logs, list_result.output, status_result.output):
        assert ray_head.token not in text


def test_submitted_training_runs_on_the_cluster(ray_head: Head, smoke_job: SmokeJob) -> None:
    # A driver that joins the cluster registers with it (driver_info); one that starts a
    # private local Ray instead (ray.init(address="local")) never does, and would never use
    # the cluster's GPU or env-runner nodes.
    assert smoke_job.result.returncode == 0, smoke_job.result.stderr[-3000:]
    with _client_env(ray_head):
        info = make_client(ray_head.url).get_job_info(smoke_job.job_id)
    assert info.driver_info is not None, "rlp train started its own Ray instead of joining"


def test_rlp_submit_never_lets_values_reach_a_shell(ray_head: Head, tmp_path: Path) -> None:
    markers = [tmp_path / f"pwned{i}" for i in range(3)]
    hostile = [
        f"name=x; touch {markers[0]}",
        f"name=$(touch {markers[1]})",
        f"name=`touch {markers[2]}`",
    ]
    args = [arg for value in hostile for arg in ("--set", value)]
    result = _rlp_submit(ray_head, SPEC, *args, "--profile", "smoke", "--no-wait", timeout_s=120)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    job_id = result.stdout.splitlines()[0].strip()

    _wait_terminal(ray_head, job_id, timeout_s=300)
    assert [m for m in markers if m.exists()] == []
    with _client_env(ray_head):
        info = make_client(ray_head.url).get_job_info(job_id)
    assert shlex.split(info.entrypoint)[2:] == [SPEC, *args, "--profile", "smoke"]
    assert json.dumps(info.runtime_env).count(ray_head.token) == 0


def test_python_api_script_runs_as_a_plain_ray_job(ray_head: Head, tmp_path: Path) -> None:
    # What `ray job submit --working-dir . -- python experiments/cartpole_python_api.py` sends.
    out = tmp_path / "runs"
    with _client_env(ray_head):
        job_id = make_client(ray_head.url).submit_job(
            entrypoint=shlex.join([sys.executable, "experiments/cartpole_python_api.py"]),
            runtime_env={
                "working_dir": str(REPO),
                "excludes": list(EXCLUDES),
                "env_vars": {"RLP_PROFILE": "smoke", "RLP_OUT": str(out)},
            },
        )
    assert _wait_terminal(ray_head, job_id, timeout_s=400) == "SUCCEEDED"
    assert list(out.glob("cartpole_ppo/*/checkpoints/iter_*"))
