"""Starting or joining Ray for `rlp train`, `rlp search` and `rlp record`, with Ray's routine
notices kept off the console.

Ray gives three loggers their own console handler and stops them propagating: `ray`
(ray/_private/log.py), `ray.rllib` (ray/rllib/__init__.py) and `ray.data`. At INFO and WARNING
they print notices that ask nothing of a local user: token auth being on, working-dir packaging,
"You are running PPO on the new API stack!", the `RLModuleConfig` deprecation that RLlib's own
`RLModule.__init__` triggers for a stock module, "Install gputil", "Trainable.setup took N
seconds". While a run is open, `ray_logs_to` writes them to its log file and leaves only Ray's
errors on the console.

Remote env runners are other processes: `log_to_driver` sends their output here, prefixed with
the actor (a user env's prints and errors included), and `worker_output.py` writes it to the
open log with the GCS's notices ("A worker died ..."). Their own Ray notices are not quieted at
the source: a `worker_process_setup_hook` could, but any job-level runtime env makes every new
worker start ~3.5 s slower on 2 cores (tests/conftest.py).
"""

import os
import subprocess
from collections.abc import Mapping

# Importing `ray.data` and `ray.rllib` adds the console handlers that are filtered here.
import ray
import ray.data
import ray.rllib
from loguru import logger

from rl_platform.ray_runtime.logs import RAY_LOGGERS, ray_logs_to
from rl_platform.ray_runtime.lost_ray import (
    kill_ray_descendants,
    ray_descendants,
    watch_for_a_lost_raylet,
)
from rl_platform.ray_runtime.ray_internals import take_local_node
from rl_platform.ray_runtime.worker_output import route_worker_output

__all__ = [
    "RAY_LOGGERS",
    "dashboard_line",
    "dashboard_url",
    "ensure_ray",
    "ray_logs_to",
    "stop_local_ray_now",
]
DASHBOARD_HOST = "127.0.0.1"
RAYLET_STOP_WAIT_S = 2.0
"""How long the raylet may take to stop its workers and agents before it is killed."""
_started_local = False
"""Whether `ensure_ray` started the embedded local Ray of this process (not joined a cluster)."""
"""Anyone who reaches the dashboard can submit jobs, i.e. run code: this machine only."""


def dashboard_url(address: str | None) -> str | None:
    """`ray.init(...).dashboard_url` (`host:port`, empty when none started) as a URL."""
    if not address:
        return None
    return address if "://" in address else f"http://{address}"


def dashboard_line(url: str, environ: Mapping[str, str]) -> str:
    """The console line for a started dashboard. With token authentication (Ray's default
    unless RAY_AUTH_MODE=disabled) the page asks for the cluster's token before it shows
    anything, so the line says where to get it; the token itself is never printed."""
    if environ.get("RAY_AUTH_MODE", "token").lower() == "disabled":
        return f"Ray dashboard: {url}"
    return f"Ray dashboard: {url} (it asks for the token that `ray get-auth-token` prints)"


def ensure_ray(
    num_cpus: int | None = None, *, log_to_driver: bool = True, dashboard: bool = False
) -> None:
    """Join the cluster in RAY_ADDRESS (set inside Ray jobs), else start an embedded local Ray;
    with `dashboard`, the local Ray serves its dashboard on 127.0.0.1 and its URL is logged.

    `address="local"` never joins a stale cluster left running on a laptop by accident.
    `log_to_driver=False` keeps the workers' output in Ray's session logs (`rlp search` draws a
    live table that it would tear).
    """
    global _started_local
    if ray.is_initialized():
        if dashboard:
            logger.warning("Ray was already running in this process; no dashboard was started")
        return
    if os.environ.get("RAY_ADDRESS"):
        context = ray.init(log_to_driver=log_to_driver)
        route_worker_output()
    else:
        context = ray.init(
            address="local",
            num_cpus=num_cpus,
            include_dashboard=dashboard,
            dashboard_host=DASHBOARD_HOST,
            log_to_driver=log_to_driver,
        )
        _started_local = True
        route_worker_output()
        watch_for_a_lost_raylet()  # one line, not Ray's 40, and no Ray process left
    if dashboard:
        url = dashboard_url(context.dashboard_url)
        if url is None:
            logger.warning("the Ray dashboard did not start (see Ray's logs under /tmp/ray)")
        else:
            logger.info(dashboard_line(url, os.environ))


def stop_local_ray_now() -> bool:
    """Before the process ends at once: stop the local Ray that `ensure_ray` started without
    `ray.shutdown`'s one-by-one waits (~1.4 s on 2 cores). The driver disconnects first, with
    `ray.shutdown` kept from stopping the processes (else Ray's core worker may end this
    process with exit 1 when it sees the raylet go). The raylet goes next and is waited for: it
    stops its own workers and agents, which the GCS must outlive (an agent that outlives the
    GCS hangs on to flush its logs). Every other process then gets a SIGTERM at once, not
    waited for. False, and nothing done, when this process joined a cluster (a cluster outlives
    its drivers) or Ray's internals are not where Ray 2.60 has them (the caller then shuts Ray
    down the usual way)."""
    if not (_started_local and ray.is_initialized()):
        return False
    descendants = ray_descendants()  # all of them: an agent may outlive a dead GCS
    node = take_local_node()  # ray.shutdown below then leaves the processes to us
    if node is None:
        return False
    ray.shutdown()
    node.release_storage()  # spilled objects, as ray.shutdown would
    for raylet in node.raylets:
        raylet.terminate()
        try:
            raylet.wait(timeout=RAYLET_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            raylet.kill()
    for process in node.others:
        if process.poll() is None:
            process.terminate()
    # Anything else of Ray's still here (an agent whose raylet died with the GCS) is killed.
    stopped = {process.pid for process in node.others}
    kill_ray_descendants([d for d in descendants if d.pid not in stopped])
    return True
