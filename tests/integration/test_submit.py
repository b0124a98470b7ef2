"""`rlp submit` / `rlp jobs` features against a real local Ray head with token auth on.

The head and its smoke job come from tests/token_head.py (session fixtures); auth, token leaks
and shell injection are checked in tests/reliability/test_job_security.py.
"""

import shlex
import sys
import textwrap
import time
from pathlib import Path

from typer.testing import CliRunner

from rl_platform.commands.jobs import jobs_app
from rl_platform.jobs.client import make_client
from rl_platform.jobs.runtime_env import EXCLUDES, job_env_vars
from tests.token_head import (
    REPO,
    TOKEN_HEAD,
    Head,
    SmokeJob,
    client_env,
    wait_terminal,
)

BACKGROUND = [TOKEN_HEAD]  # the head starts beside the rest of the suite

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
    with client_env(ray_head):
        client = make_client(ray_head.url)
        job_id = client.submit_job(
            entrypoint=shlex.join([sys.executable, "-c", TRAP_SIGTERM, str(marker)]),
            runtime_env={"env_vars": job_env_vars({"RLP_STOP_GRACE_S": "8"})},
        )
        # A loaded 2-core machine can take over a minute to start a job's worker; stopping
        # before the trap is installed would test nothing.
        deadline = time.monotonic() + 240
        while "ready" not in client.get_job_logs(job_id) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "ready" in client.get_job_logs(job_id), "the job never started its trap"
        result = CliRunner().invoke(jobs_app, ["stop", job_id, "--address", ray_head.url])
    assert result.exit_code == 0, result.output
    assert "has 8 s to write a final checkpoint" in result.output
    assert "after 23 s" in result.output  # RLP_STOP_GRACE_S + 15
    assert wait_terminal(ray_head, job_id, timeout_s=60) == "STOPPED"
    assert marker.read_text() == "final checkpoint"


def test_submitted_training_runs_on_the_cluster(ray_head: Head, smoke_job: SmokeJob) -> None:
    # A driver that joins the cluster registers with it (driver_info); one that starts a
    # private local Ray instead (ray.init(address="local")) never does, and would never use
    # the cluster's GPU or env-runner nodes.
    assert smoke_job.result.returncode == 0, smoke_job.result.stderr[-3000:]
    with client_env(ray_head):
        info = make_client(ray_head.url).get_job_info(smoke_job.job_id)
    assert info.driver_info is not None, "rlp train started its own Ray instead of joining"


def test_python_api_script_runs_as_a_plain_ray_job(ray_head: Head, tmp_path: Path) -> None:
    # What `ray job submit --working-dir . -- python experiments/cartpole_python_api.py` sends.
    out = tmp_path / "runs"
    with client_env(ray_head):
        job_id = make_client(ray_head.url).submit_job(
            entrypoint=shlex.join([sys.executable, "experiments/cartpole_python_api.py"]),
            runtime_env={
                "working_dir": str(REPO),
                "excludes": list(EXCLUDES),
                "env_vars": {"RLP_PROFILE": "smoke", "RLP_OUT": str(out)},
            },
        )
    assert wait_terminal(ray_head, job_id, timeout_s=400) == "SUCCEEDED"
    assert list(out.glob("cartpole_ppo/*/checkpoints/iter_*"))
