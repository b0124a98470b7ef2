"""A real local Ray head with token authentication, shared by the submit and job-security tests.

The head gets its own temp dir and ports and is stopped by killing only its own process tree
(never `ray stop`, which would take down every Ray on the machine, other sessions' included).
It is session-scoped: starting one costs ~40 s on 2 cores, and the integration (`rlp submit`
features) and reliability (auth, injection, token leaks) tests share it and its smoke job. Both
start beside the rest of the suite, as a background scenario (tests/background.py) of the
modules that use them.
"""

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rl_platform.jobs.client import bearer_headers, make_client
from tests.background import Background, Scenario
from tests.ray_head_support import START_ATTEMPTS, free_port, kill_scoped, start_head

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
SPEC = "experiments/cartpole_ppo.yaml"


@dataclass(frozen=True)
class Head:
    url: str
    token: str
    home: Path
    base_env: dict[str, str] = field(repr=False)
    """The test session's environment when the head started; clients start from it."""

    def client_env(self, token: str | None = None) -> dict[str, str]:
        """Environment for a client process: its own HOME, the token only via the env var."""
        prefixes = ("RAY_ADDRESS", "RAY_AUTH")
        env = {k: v for k, v in self.base_env.items() if not k.startswith(prefixes)}
        env.update(HOME=str(self.home), RAY_AUTH_TOKEN=token or self.token)
        return env


@dataclass(frozen=True)
class SmokeJob:
    job_id: str
    out: Path
    result: subprocess.CompletedProcess[str]


def http_status(url: str, token: str | None) -> int:
    """Status of a GET with `token` as bearer (no header when None)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


@contextlib.contextmanager
def client_env(head: Head, token: str | None = None) -> Iterator[None]:
    """Run in-process client code with the head's client environment."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(head.client_env(token))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def wait_terminal(head: Head, job_id: str, timeout_s: float) -> str:
    with client_env(head):
        client = make_client(head.url)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = client.get_job_status(job_id)
            if status.is_terminal():
                return status.value
            time.sleep(1)
    pytest.fail(f"job {job_id} did not finish within {timeout_s} s")


def rlp_submit(head: Head, *args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """The real `rlp submit` console script against `head`, as a user would run it."""
    return subprocess.run(
        [str(BIN / "rlp"), "submit", *args, "--address", head.url],
        cwd=REPO,
        env=head.client_env(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )


def _ready(proc: subprocess.Popen, head: Head, log: Path, *, attempt: int) -> bool:
    """True once the job API answers and runs a no-op job (its agent registers after the API
    comes up); False if `ray start` died or hung and another attempt is left.

    Runs in the background (tests/background.py): the token goes in the header, never through
    `os.environ`, which the tests in the foreground own."""
    from ray.job_submission import JobSubmissionClient

    deadline = time.monotonic() + 240
    last_error: Exception | None = None
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            client = JobSubmissionClient(head.url, headers=bearer_headers(head.token))
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


def _launch(temp_dir: str, token: str, base_env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """Start `ray start --head --block` on fresh ports; return it and its dashboard URL."""
    dashboard_port = free_port()
    env = {k: v for k, v in base_env.items() if not k.startswith(("RAY_ADDRESS", "RAY_AUTH"))}
    env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token, RAY_USAGE_STATS_ENABLED="0")
    # The raylet waits this long for its dashboard agent to report a port; the agent is a heavy
    # Python import that misses the default on a busy 2-core machine.
    env["RAY_raylet_start_wait_time_s"] = "120"
    flags = [
        f"--port={free_port()}",
        "--num-cpus=2",
        "--object-store-memory=300000000",
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={dashboard_port}",
    ]
    proc = start_head(flags, temp_dir=temp_dir, env=env)
    return proc, f"http://127.0.0.1:{dashboard_port}"


@dataclass(frozen=True)
class TokenHead:
    head: Head
    smoke_job: SmokeJob


@contextlib.contextmanager
def _token_head(folder: Path, env: dict[str, str]) -> Iterator[TokenHead]:
    """The head, up until the session ends, and the smoke job already run on it."""
    token = secrets.token_hex(32)
    for attempt in range(1, START_ATTEMPTS + 1):
        temp_dir = tempfile.mkdtemp(prefix="rlp-sub-", dir="/tmp")  # short: unix socket paths
        home = Path(temp_dir) / "home"
        home.mkdir()
        proc, url = _launch(temp_dir, token, env)
        head = Head(url=url, token=token, home=home, base_env=env)
        try:
            if _ready(proc, head, Path(temp_dir) / "ray-start.log", attempt=attempt):
                yield TokenHead(head, _run_smoke_job(head, folder / "smoke" / "runs"))
                return
        finally:
            kill_scoped(proc, temp_dir)
            shutil.rmtree(temp_dir, ignore_errors=True)


def _run_smoke_job(head: Head, out: Path) -> SmokeJob:
    """`rlp submit` of the smoke profile, run once for the tests that inspect it."""
    result = rlp_submit(head, SPEC, "--profile", "smoke", "--out", str(out), timeout_s=480)
    job_id = result.stdout.splitlines()[0].strip() if result.stdout else ""
    return SmokeJob(job_id=job_id, out=out, result=result)


# Started beside the rest of the suite (tests/background.py) by the modules that use it.
TOKEN_HEAD = Scenario("token_head", _token_head)


@pytest.fixture(scope="session")
def ray_head(background: Background) -> Head:
    return background.result(TOKEN_HEAD).head


@pytest.fixture(scope="session")
def smoke_job(background: Background) -> SmokeJob:
    return background.result(TOKEN_HEAD).smoke_job
