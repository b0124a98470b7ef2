"""How the `rlp` console command ends: its exit code, without the interpreter's teardown.

Once a command has returned, its files are written and closed. A normal interpreter exit
then still costs 2.5-3 s on 2 cores (docs/training.md, "Where a CartPole run's seconds go,
and the exit"): Ray's atexit `shutdown` stops the embedded local Ray's processes one after
another (~1.4 s), and Python tears down the module graph of torch and Ray (~1.1 s). The
console entry point skips both and ends with `os._exit`.

The atexit handlers run as in a normal exit (a user env module's cleanup among them); only
the module teardown is skipped. Before them, the embedded local Ray stops without waiting for
each process in turn (`session.stop_local_ray_now`): the raylet, waited for, stops its
workers and agents; the other processes get a SIGTERM at once. Ending without that leaves
Ray's agents running: their parent-death check waits on the dead GCS. A process that joined a
cluster disconnects with `ray.shutdown` (fast: nothing to stop), so the cluster sees a driver
that ended. Where a non-daemon thread still runs, Python would have waited for it, so the exit
is a normal one.

Only the console entry point does this: tests calling the Typer app and the Python API exit
as usual.
"""

import atexit
import os
import sys
import threading
from collections.abc import Callable

from loguru import logger


def exit_code_of(code: object) -> int:
    """`SystemExit.code` as a process exit status: None is 0; a message is printed, then 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _other_threads_that_block_exit() -> list[str]:
    main = threading.main_thread()
    return [
        t.name for t in threading.enumerate() if t is not main and t.is_alive() and not t.daemon
    ]


def _let_ray_go() -> None:
    """Stop the local Ray this process started, or disconnect from a joined cluster."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    from rl_platform.ray_runtime.session import stop_local_ray_now

    if not stop_local_ray_now():
        ray.shutdown()


def exit_now(
    code: int,
    *,
    run_exit_handlers: Callable[[], None] = atexit._run_exitfuncs,
    hard_exit: Callable[[int], None] = os._exit,
) -> None:
    """End the process with `code`: at once where it is safe, else through `sys.exit`."""
    if _other_threads_that_block_exit():
        sys.exit(code)
    _let_ray_go()
    # What a normal exit runs before its teardown: a user env module's cleanup, logging's
    # flush, Ray's own hook (quick once Ray is stopped). 0.01-0.03 s after a CartPole run.
    run_exit_handlers()
    logger.complete()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    hard_exit(code)
