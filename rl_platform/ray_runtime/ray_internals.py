"""The one seam to Ray's own internals (Ray 2.60.0): every `ray._private` import, every private
attribute of Ray core and every patch of a Ray core object in rl_platform is here, each behind a
named function that says why no public API serves. RLlib's and Tune's are in
`rllib_internals.py` beside this file.

`tests/unit/test_ray_internals.py` fails, naming the file and line, when such a use appears
anywhere else; `tests/integration/test_ray_touchpoints.py` exercises each function here against
the installed Ray, so a Ray upgrade fails one named test per touchpoint that moved. Ray's
modules are imported by the functions that use them, so importing this seam loads no Ray
(`rlp submit` needs only `quiet_working_dir_packaging` until it has a client).
"""

import contextlib
import functools
import logging
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from rl_platform.utils.patched_call import Handler, PatchedCall, patch_call

LOST_RAYLET = "lost_raylet"
WORKER_OUTPUT = "worker_output"
DRIVER_PRINT_HANDLERS = (LOST_RAYLET, WORKER_OUTPUT)
"""The handlers of what Ray's driver prints, outermost first: a lost raylet ends the process
(`lost_ray.py`) before its lines are routed to the run's log (`worker_output.py`)."""
PRINT_HANDLER_NAME = "ray_print_logs"
"""The name `ray.init` registers its worker-output printer under (ray/_private/worker.py)."""
RUNTIME_ENV_LOGGER = "ray._private.runtime_env"
"""The logger of Ray's runtime-env packaging (ray/_private/runtime_env/packaging.py)."""


def _ray_worker() -> ModuleType:
    import ray._private.worker

    return ray._private.worker


def handle_driver_prints(name: str, handler: Handler) -> None:
    """After `ray.init`: what Ray's driver prints (remote workers' output, the GCS's notices)
    passes through `handler` (`name`: one of `DRIVER_PRINT_HANDLERS`), a decorator of Ray's
    `print_to_stdstream(batch, ignore_prefix)`. Why: Ray 2.60 has no hook for these streams;
    its error listener looks up `ray._private.worker.print_to_stdstream` each time it prints,
    and its log thread calls the handler that `ray.init` registered on
    `global_worker_stdstream_dispatcher` (a partial of that printer, bound at `ray.init`)."""
    patched = patch_call(_ray_worker(), "print_to_stdstream", DRIVER_PRINT_HANDLERS)
    patched.set(name, handler)
    _dispatch_worker_output_to(patched)


def _dispatch_worker_output_to(patched: PatchedCall) -> None:
    """The dispatcher's printer bound to `patched` (a `ray.init` after the patch binds it
    itself; with `log_to_driver=False` there is none)."""
    ray_worker = _ray_worker()
    dispatcher = ray_worker.global_worker_stdstream_dispatcher
    registered = dict(dispatcher.handlers).get(PRINT_HANDLER_NAME)
    if registered is None or getattr(registered, "func", None) is patched:
        return
    ignore_prefix = ray_worker._should_ignore_worker_log_prefix(ray_worker.global_worker)
    dispatcher.remove_handler(PRINT_HANDLER_NAME)
    dispatcher.add_handler(
        PRINT_HANDLER_NAME, functools.partial(patched, ignore_prefix=ignore_prefix)
    )


@dataclass(frozen=True)
class LocalNode:
    """The embedded local Ray's node, taken from the driver: its processes are the caller's."""

    node: Any
    raylets: list[subprocess.Popen]
    others: list[subprocess.Popen]
    """Every other process the node started (GCS, agents, ...)."""

    def release_storage(self) -> None:
        """Remove the head node's spilled objects, as `ray.shutdown` would."""
        if self.node.is_head():
            self.node.destroy_external_storage()


def take_local_node() -> LocalNode | None:
    """This driver's local Ray node, taken from Ray's worker so that `ray.shutdown` leaves its
    processes to the caller; None where Ray 2.60 does not keep it there. Why: `ray.shutdown`
    stops the node's processes one by one, waiting for each (~1.4 s on 2 cores), and Ray has
    no public handle on the node or its processes."""
    try:
        from ray._private import ray_constants

        ray_worker = _ray_worker()
        node = ray_worker._global_node
        processes = dict(node.all_processes)
        raylets = processes.pop(ray_constants.PROCESS_TYPE_RAYLET, [])
        ray_worker._global_node = None
    except (ImportError, AttributeError):
        return None
    return LocalNode(
        node=node,
        raylets=[info.process for info in raylets],
        others=[info.process for infos in processes.values() for info in infos],
    )


def detected_cpus() -> float:
    """The CPUs an embedded Ray would detect on this machine (the cgroup's quota, the affinity
    mask), else the plain count. Why: Ray detects them only inside `ray.init`
    (`ray._private.utils.get_num_cpus`); `ray.cluster_resources` needs a started Ray."""
    try:
        from ray._private.utils import get_num_cpus

        return float(get_num_cpus())
    except (ImportError, AttributeError):
        return float(os.cpu_count() or 1)


@contextlib.contextmanager
def quiet_working_dir_packaging() -> Iterator[None]:
    """While open, Ray's runtime-env packaging logs errors only: it logs a line per ignored
    file and per default exclude while it zips a working dir (~20 lines for this repository),
    and the excludes are ours, shown in the runtime env already. Why: it logs to its private
    package's logger, which no setting of Ray's quiets."""
    packaging = logging.getLogger(RUNTIME_ENV_LOGGER)
    level = packaging.level
    packaging.setLevel(logging.ERROR)
    try:
        yield
    finally:
        packaging.setLevel(level)
