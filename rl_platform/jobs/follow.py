"""Following a job: stream its logs until it ends, then report its final status.

`JobSubmissionClient.tail_job_logs` is an async generator over a websocket that closes when the
job reaches a terminal state. Interrupting the caller (Ctrl+C) only closes that websocket; the
job keeps running on the cluster.
"""

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from loguru import logger

if TYPE_CHECKING:
    from ray.job_submission import JobStatus, JobSubmissionClient


async def _tail(client: "JobSubmissionClient", job_id: str, on_text: Callable[[str], None]) -> None:
    async for chunk in client.tail_job_logs(job_id):
        on_text(chunk)


def wait_until_terminal(
    client: "JobSubmissionClient",
    job_id: str,
    *,
    poll_s: float = 1.0,
    timeout_s: float | None = None,
) -> "JobStatus":
    """Poll until the job has ended; return the last status seen (also on timeout)."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    status = client.get_job_status(job_id)
    while not status.is_terminal():
        if deadline is not None and time.monotonic() > deadline:
            break
        time.sleep(poll_s)
        status = client.get_job_status(job_id)
    return status


def follow_job(
    client: "JobSubmissionClient", job_id: str, *, on_text: Callable[[str], None]
) -> "JobStatus":
    """Stream the job's output to `on_text` until it ends; return its final status."""
    try:
        asyncio.run(_tail(client, job_id, on_text))
    except RuntimeError as exc:
        # The log websocket can drop (head restart, flaky tunnel); the status still tells.
        logger.warning("log stream for job {} ended early: {}", job_id, exc)
    return wait_until_terminal(client, job_id)
