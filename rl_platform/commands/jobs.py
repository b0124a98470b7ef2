"""`rlp submit` and `rlp jobs ...`: run experiment specs as Ray jobs on a cluster.

The main CLI registers these with `app.add_typer(jobs_app, name="jobs")` and
`app.command("submit")(submit_command)`. Ray is imported lazily so `rlp --help` stays fast,
and so is `submit.py`, whose run manifest (pydantic models) costs ~0.1 s at start-up.
"""

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from rl_platform.commands.error_boundary import FAILED_EXIT, user_errors
from rl_platform.commands.options import ProfileOpt, SetOpt
from rl_platform.commands.output import JsonOpt, write_json
from rl_platform.jobs.client import ADDRESS_ENV_VAR, DEFAULT_ADDRESS, auth_hint, make_client
from rl_platform.jobs.errors import ClusterAuthError, ClusterUnreachableError, JobNotFoundError
from rl_platform.jobs.follow import follow_job
from rl_platform.jobs.runtime_env import RAY_STOP_WAIT_ENV_VAR
from rl_platform.utils.consoles import say, stderr_console, stdout_console
from rl_platform.utils.stop_grace import STOP_GRACE_ENV_VAR

if TYPE_CHECKING:
    from ray.job_submission import JobSubmissionClient

    from rl_platform.jobs.submit import Submission

jobs_app = typer.Typer(
    name="jobs", help="List, inspect, follow and stop Ray jobs.", no_args_is_help=True
)
# Every line here is printed with soft_wrap: long ids and commands are wrapped by the
# terminal, never split by rich (a split command cannot be copied).

Address = Annotated[
    str,
    typer.Option(
        "--address",
        envvar=ADDRESS_ENV_VAR,
        help="Job server (dashboard) URL. Token: RAY_AUTH_TOKEN or ~/.ray/auth_token.",
    ),
]
JobId = Annotated[str, typer.Argument(help="Submission id printed by `rlp submit`.")]


def _check_job_id(job_id: str) -> str:
    from rl_platform.jobs.submit import JOB_ID

    if not JOB_ID.fullmatch(job_id):
        raise JobNotFoundError(f"{job_id!r} is not a job id (letters, digits, '_' and '-' only)")
    return job_id


@contextlib.contextmanager
def _cluster_errors(address: str, job_id: str | None = None) -> Iterator[None]:
    """Turn Ray client exceptions into user errors with a next step."""
    from ray.exceptions import AuthenticationError
    from requests.exceptions import ConnectionError as RequestsConnectionError

    try:
        yield
    except AuthenticationError as exc:
        raise ClusterAuthError(auth_hint(address, exc)) from None
    except (ConnectionError, RequestsConnectionError):
        raise ClusterUnreachableError(
            f"lost the connection to the job server at {address}"
        ) from None
    except RuntimeError as exc:
        if job_id is not None and "404" in str(exc):
            raise JobNotFoundError(f"no job {job_id!r} on the cluster at {address}") from None
        raise


def _write_raw(text: str) -> None:
    # Job output is passed through untouched: no markup, no highlighting.
    sys.stdout.write(text)
    sys.stdout.flush()


def _exit_for(status: str) -> None:
    if status != "SUCCEEDED":
        raise typer.Exit(code=FAILED_EXIT)


@user_errors
def submit_command(
    spec: Annotated[Path, typer.Argument(help="Experiment spec (YAML) inside the current folder.")],
    set_: SetOpt = None,
    profile: ProfileOpt = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Name the job: its id becomes rlp_NAME_<8 hex>."),
    ] = None,
    address: Address = DEFAULT_ADDRESS,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Print the job id and return; don't stream logs.")
    ] = False,
    out: Annotated[
        str | None,
        typer.Option(
            "--out",
            help="Run folder root on the cluster, or storage the runs go to (s3://bucket/runs, "
            "gs://..., file:///shared/runs; rlp train --out): `rlp pull JOB_ID --from` it.",
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option("--seeds", help="Several seeds as one experiment (rlp train --seeds)."),
    ] = None,
) -> None:
    """Run `rlp train SPEC` as a Ray job on a cluster, uploading the current folder."""
    from rl_platform.jobs.submit import submit_spec

    with _cluster_errors(address):
        client = make_client(address)
        submission = submit_spec(
            client=client,
            spec=spec,
            overrides=set_ or [],
            profile=profile,
            out=out,
            seeds=seeds,
            name=name,
        )
    _show_submission(submission)
    if not no_wait:
        _follow_until_done(client, address, submission.job_id)


def _show_submission(submission: "Submission") -> None:
    """The job id on stdout (for scripts), what runs and with which env on stderr."""
    typer.echo(submission.job_id)
    stderr_console.print(f"[bold]submitted[/] {submission.job_id}", highlight=False, soft_wrap=True)
    say(f"  entrypoint: {submission.entrypoint}")
    say(f"  env: {submission.shown_runtime_env()['env_vars']}")


def _follow_until_done(client: "JobSubmissionClient", address: str, job_id: str) -> None:
    """Stream the job's logs to its end and exit with its status; Ctrl+C only detaches."""
    stderr_console.print(
        "streaming logs; Ctrl+C detaches, the job keeps running", style="dim", soft_wrap=True
    )
    try:
        with _cluster_errors(address, job_id):
            status = follow_job(client, job_id, on_text=_write_raw)
    except KeyboardInterrupt:
        stderr_console.print(
            f"\ndetached; job {job_id} keeps running. Follow it with "
            f"`rlp jobs logs {job_id} --follow`, stop it with `rlp jobs stop {job_id}`.",
            markup=False,
            soft_wrap=True,
        )
        return
    stderr_console.print(f"job {job_id} {status.value}", markup=False, soft_wrap=True)
    _exit_for(status.value)


@jobs_app.command("list")
@user_errors
def list_command(
    address: Address = DEFAULT_ADDRESS,
    as_json: JsonOpt = False,
) -> None:
    """List the jobs on the cluster, newest first (with --json: times in epoch ms)."""
    with _cluster_errors(address):
        jobs = make_client(address).list_jobs()
    rows = [
        {
            "id": job.submission_id or job.job_id or "?",
            "status": job.status.value,
            "start_time": job.start_time,
            "end_time": job.end_time,
            "entrypoint": job.entrypoint,
            "message": job.message,
        }
        for job in sorted(jobs, key=lambda j: j.start_time or 0, reverse=True)
    ]
    if as_json:
        write_json(rows)
        return
    table = Table("id", "status", "started", "entrypoint")
    for row in rows:
        table.add_row(row["id"], row["status"], _format_ms(row["start_time"]), row["entrypoint"])
    stdout_console.print(table)


def _format_ms(epoch_ms: int | None) -> str:
    import datetime as dt

    if not epoch_ms:
        return "-"
    return dt.datetime.fromtimestamp(epoch_ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


@jobs_app.command("status")
@user_errors
def status_command(job_id: JobId, address: Address = DEFAULT_ADDRESS) -> None:
    """Show one job's status and message."""
    job_id = _check_job_id(job_id)
    with _cluster_errors(address, job_id):
        info = make_client(address).get_job_info(job_id)
    typer.echo(info.status.value)
    if info.message:
        stderr_console.print(info.message, markup=False, highlight=False, soft_wrap=True)


@jobs_app.command("logs")
@user_errors
def logs_command(
    job_id: JobId,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep streaming until it ends.")
    ] = False,
    address: Address = DEFAULT_ADDRESS,
) -> None:
    """Print a job's logs so far, or follow them until the job ends."""
    job_id = _check_job_id(job_id)
    with _cluster_errors(address, job_id):
        client = make_client(address)
        if not follow:
            _write_raw(client.get_job_logs(job_id))
            return
        try:
            status = follow_job(client, job_id, on_text=_write_raw)
        except KeyboardInterrupt:
            stderr_console.print(
                f"\ndetached; job {job_id} keeps running", markup=False, soft_wrap=True
            )
            return
    stderr_console.print(f"job {job_id} {status.value}", markup=False, soft_wrap=True)


@jobs_app.command("stop")
@user_errors
def stop_command(job_id: JobId, address: Address = DEFAULT_ADDRESS) -> None:
    """Stop a job: SIGTERM first, so training can save a final checkpoint, SIGKILL later."""
    job_id = _check_job_id(job_id)
    with _cluster_errors(address, job_id):
        client = make_client(address)
        was_running = client.stop_job(job_id)
        info = client.get_job_info(job_id)
    if not was_running:
        stderr_console.print(
            f"job {job_id} was not running ({info.status.value})", markup=False, soft_wrap=True
        )
        return
    env_vars = (info.runtime_env or {}).get("env_vars") or {}
    # Ray's own default when the job was not sent by `rlp submit`.
    wait_s = env_vars.get(RAY_STOP_WAIT_ENV_VAR, "3")
    grace = env_vars.get(STOP_GRACE_ENV_VAR)
    checkpoint = f"has {grace} s to write a final checkpoint; " if grace else ""
    stderr_console.print(
        f"stop requested for {job_id}: SIGTERM sent, the training {checkpoint}"
        f"Ray kills what is left after {wait_s} s.",
        markup=False,
        soft_wrap=True,
    )
