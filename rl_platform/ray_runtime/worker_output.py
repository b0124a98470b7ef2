"""What Ray's workers print goes to the run's log while a run is open, not to the console.

Ray's driver prints two streams that are not log records, so `ray_logs_to` cannot keep them
off the console: what remote workers write to stdout/stderr (`log_to_driver`: a remote env
runner's traceback when a user's env raises, the env's own prints), prefixed with the actor;
and the notices the GCS publishes to the driver ("(raylet) A worker died or was killed while
executing a task ..." when an env runner is SIGKILLed). Both reach the console before or after
the one line `rlp` prints for what happened. While `ray_logs_to` is open (a run's `train.log`,
a seeds study's log, the notices log of the verbs without a run folder), each printed line
becomes a record of the `ray.workers` logger there, with Ray's prefix; at other times Ray prints
them as it would. The actors named by `workers_on_console` are ours (a seeds study's trials,
whose lines are their runs' progress, already in `rlp`'s console format with their seed as the
label) and keep the console: their lines print as they are, without Ray's coloured
`(actor pid=...)` prefix and without Ray's folding of lines that differ only in their numbers
(`[repeated 3x across cluster]`, which would hide some seeds' progress).

Ray 2.60 has no public hook for this: `route_worker_output` hands Ray's driver printer a
handler through the seam (`ray_internals.handle_driver_prints`, which says what it replaces;
tests/reliability/test_console_is_ours.py fails if it stops working).
"""

import contextlib
import logging
import re
import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from rl_platform.ray_runtime.logs import a_ray_log_is_open
from rl_platform.ray_runtime.ray_internals import WORKER_OUTPUT, handle_driver_prints

WORKER_LOGGER = logging.getLogger("ray.workers")
WORKER_LOGGER.setLevel(logging.INFO)  # Ray's own level for `ray` may be WARNING
_UNPREFIXED = ("raylet", "autoscaler")
_USER_ENV_ERROR = re.compile(r"\bUserEnvError: (?P<message>.+)$")
"""The last line of a remote env runner's traceback when a user's env failed in it
(`envs/user_env_checks.py`): our own one-line account of the failure."""
_env_errors: deque[str] = deque(maxlen=16)
_on_console: set[str] = set()


@contextlib.contextmanager
def workers_on_console(*actor_names: str) -> Iterator[None]:
    """While open, what these actors (Ray's prefix names) print stays on the console."""
    _on_console.update(actor_names)
    try:
        yield
    finally:
        _on_console.difference_update(actor_names)


def _source(batch: dict[str, Any]) -> str:
    return batch.get("actor_name") or batch.get("task_name") or ""


def _prefix(batch: dict[str, Any]) -> str:
    """Ray's own prefix: `(raylet) `, `(SingleAgentEnvRunner pid=123, ip=10.0.0.1) `."""
    pid = batch.get("pid")
    if pid in _UNPREFIXED:
        return f"({pid}) "
    who = f"{_source(batch)} ".lstrip()  # a nameless worker: `(pid=123) `
    where = f", ip={batch['ip']}" if batch.get("ip") else ""
    return f"({who}pid={pid}{where}) "


def _log_worker_lines(batch: dict[str, Any]) -> None:
    """Each printed line as a record (stderr at WARNING), one per line, no folding of repeats."""
    level = logging.WARNING if batch.get("is_err") else logging.INFO
    prefix = _prefix(batch)
    for line in batch.get("lines") or []:
        WORKER_LOGGER.log(level, "%s%s", prefix, line)


def _print_as_they_are(batch: dict[str, Any]) -> None:
    """An on-console actor's lines, on stderr (stdout is a command's result) and unfolded."""
    sys.stderr.writelines(f"{line}\n" for line in batch.get("lines") or [])
    sys.stderr.flush()


def _note_env_errors(batch: dict[str, Any]) -> None:
    if not batch.get("is_err"):
        return
    for line in batch.get("lines") or []:
        if found := _USER_ENV_ERROR.search(str(line)):
            _env_errors.append(found["message"])


def take_env_errors() -> list[str]:
    """The user env errors remote env runners printed since the last call, oldest first: a
    runner that RLlib restarts after its env raised is named with its env's own line."""
    taken = list(_env_errors)
    _env_errors.clear()
    return taken


def _routed(printer: Callable[..., None]) -> Callable[..., None]:
    """Ray's `printer` wrapped: our actors' lines as they are, others' to the open log, or to
    `printer` while no log is open."""

    def print_or_log(batch: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        _note_env_errors(batch)
        if _source(batch) in _on_console:
            _print_as_they_are(batch)
        elif a_ray_log_is_open():
            _log_worker_lines(batch)
        else:
            printer(batch, *args, **kwargs)

    return print_or_log


def route_worker_output() -> None:
    """After `ray.init`: workers' printed output and the GCS's notices go to the open log."""
    handle_driver_prints(WORKER_OUTPUT, _routed)
