"""Remote env runners that this machine's Ray cannot start, refused before a run folder exists.

Each remote env runner is an actor that asks Ray for `resources.cpus_per_env_runner` CPUs (and
any `resources.custom_resources_per_env_runner`). On the embedded local Ray (no `RAY_ADDRESS`)
nothing ever adds CPUs or a node with a custom resource, so runners beyond what it has wait
silently forever: `rlp train` with 8 env runners on a 2-CPU machine never started. Refused in
one line naming the setting and the CPUs there are. A cluster (`RAY_ADDRESS`) is not refused:
its autoscaler may add nodes; there `waiting_for_resources_noticed` says, every
`RLP_RESOURCE_WAIT_S` (default 30 s) that the algorithm is still being built, what waits for
which resource and what the cluster has free.
"""

import contextlib
import os
import threading
from collections.abc import Iterator

import ray
from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.ray_runtime.ray_internals import detected_cpus
from rl_platform.spec import ExperimentSpec
from rl_platform.utils.env_seconds import seconds_from_env


def local_ray_cpus() -> float:
    """The CPUs of the Ray this process runs (the session Ray of a test), else the CPUs an
    embedded Ray would detect here (Ray's own count: the cgroup's quota, the affinity mask)."""
    if ray.is_initialized():
        return float(ray.cluster_resources().get("CPU", 0.0))
    return detected_cpus()


def check_env_runners_fit(spec: ExperimentSpec, *, cpus: float | None = None) -> None:
    """`UserError` when the local Ray could never start the spec's remote env runners."""
    resources = spec.resources
    if resources.env_runners == 0 or os.environ.get("RAY_ADDRESS"):
        return
    custom = resources.custom_resources_per_env_runner
    if custom:
        raise UserError(
            f"resources.custom_resources_per_env_runner: {dict(custom)} is declared by no node "
            "of a local Ray, so its env runners would never start; "
            "remove it to train on this machine, or submit to a cluster that has such nodes "
            "(docs/cluster.md)"
        )
    cpus = local_ray_cpus() if cpus is None else cpus
    need = resources.env_runners * resources.cpus_per_env_runner
    if need > cpus + 1e-9:
        fits = int(cpus // resources.cpus_per_env_runner)
        raise UserError(
            f"resources.env_runners: {resources.env_runners} remote env runners x "
            f"resources.cpus_per_env_runner {resources.cpus_per_env_runner:g} need {need:g} "
            f"CPUs; this machine's Ray has {cpus:g} CPUs, so Ray would wait for them forever. "
            f"Use at most {fits} env runners, a lower cpus_per_env_runner, or a cluster "
            "(RAY_ADDRESS)"
        )


RESOURCE_WAIT_ENV = "RLP_RESOURCE_WAIT_S"
DEFAULT_RESOURCE_WAIT_S = 30.0


def resource_wait_s() -> float:
    """`RLP_RESOURCE_WAIT_S` in seconds, else the default."""
    return seconds_from_env(RESOURCE_WAIT_ENV, DEFAULT_RESOURCE_WAIT_S)


def waiting_line(spec: ExperimentSpec, *, waited_s: float) -> str:
    """What the run's actors ask for, and what Ray has free now."""
    resources = spec.resources
    asks = {"CPU": resources.cpus_per_env_runner, **resources.custom_resources_per_env_runner}
    asked = ", ".join(f"{name} {amount:g}" for name, amount in asks.items())
    try:
        free, total = ray.available_resources(), ray.cluster_resources()
        have = ", ".join(
            f"{name} {free.get(name, 0.0):g} of {total.get(name, 0.0):g}" for name in asks
        )
    except Exception:  # Ray's state unreadable: say what is asked
        have = "unknown"
    return (
        f"still starting after {waited_s:.0f} s: resources.env_runners {resources.env_runners} "
        f"remote env runner(s) each wait for {asked}; Ray has free now: {have}. They start "
        "when a node has them (an autoscaler may add one); Ctrl+C to stop, or ask for fewer"
    )


@contextlib.contextmanager
def waiting_for_resources_noticed(spec: ExperimentSpec) -> Iterator[None]:
    """While the block runs (the algorithm's build, which starts its actors), log
    `waiting_line` every `RLP_RESOURCE_WAIT_S`."""
    every = resource_wait_s()
    if spec.resources.env_runners == 0:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        waited = 0.0
        while not done.wait(every):
            waited += every
            logger.warning(waiting_line(spec, waited_s=waited))

    thread = threading.Thread(target=watch, name="rlp-resource-wait", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
