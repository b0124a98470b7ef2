"""Run a benchmark's independent jobs as Ray tasks, as many at once as the Ray it joins fits.

    from benchmarks.common.fan_out import fan_out

    for key, outcome in fan_out(work, {key: (args, kwargs), ...}, num_cpus=2):
        ...  # `outcome` is the job's return value, or the error that ended it

Joins the cluster in RAY_ADDRESS (inside `ray job submit`, or set by hand), else starts a local
Ray with every core of this machine (`rl_platform.ray_runtime.session.ensure_ray`). Each job runs
in a Ray worker of its own with `num_cpus` reserved, so a 64-core cluster trains 32 runs of 2
threads side by side where one machine trains them one after another. `work` is pickled by
value, with its own module and every module of the `benchmarks` package, so the workers need
`rl_platform` installed, not the benchmarks folder on their path. A job that
fails does not stop the others: its error comes back in its place, and no job is retried (a
training that crashed once would crash again; its half-written run folder stays, to read).
"""

import sys
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any

import ray
import ray.cloudpickle

from rl_platform.ray_runtime.session import ensure_ray

PACKAGE = __name__.split(".")[0]
"""`benchmarks`: every module in it goes to the workers by value."""


def fan_out(
    work: Callable[..., Any],
    jobs: Mapping[Hashable, tuple[tuple, dict[str, Any]]],
    *,
    num_cpus: float,
) -> Iterator[tuple[Hashable, Any]]:
    """Yields `(key, outcome)` per job in the order the jobs end: `work(*args, **kwargs)`'s
    return value, or the `ray.exceptions.RayError` that ended it."""
    ensure_ray()
    _send_by_value(work)
    task = ray.remote(num_cpus=num_cpus, max_retries=0)(work)
    pending = {
        task.options(name=str(key)).remote(*args, **kwargs): key
        for key, (args, kwargs) in jobs.items()
    }
    while pending:
        [done], _ = ray.wait(list(pending), num_returns=1)
        key = pending.pop(done)
        try:
            yield key, ray.get(done)
        except ray.exceptions.RayError as error:
            yield key, error


def _send_by_value(work: Callable[..., Any]) -> None:
    """A job's code lives in a script or in the `benchmarks` package (`benchmarks.common.
    style_arena`, ...), which a worker may not be able to import: cloudpickle sends them with
    the job instead of by name."""
    for name, module in list(sys.modules.items()):
        ours = name == work.__module__ or name.split(".")[0] == PACKAGE
        if ours and name != "__main__":  # `__main__` goes by value anyway
            ray.cloudpickle.register_pickle_by_value(module)
