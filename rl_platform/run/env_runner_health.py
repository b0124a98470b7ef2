"""Stop a run whose remote env runners are all gone for good instead of looping on empty iterations.

RLlib restarts a crashed remote env runner up to `max_num_env_runner_restarts` times (set in
`rllib.config`). After that the actor stays dead and every later `train()` samples nothing, so
without this check a run would spin through empty iterations until a stop condition or forever.
The check costs nothing while at least one remote runner is healthy.
"""

from typing import Any

import ray
from ray.exceptions import ActorDiedError, RayError

from rl_platform.base.errors import TrainingHealthError

PING_TIMEOUT_S = 10.0


def dead_env_runner_ids(algo: Any) -> list[int]:
    """Remote env runners that are dead for good (restart limit used up); [] if any is healthy."""
    group = getattr(algo, "env_runner_group", None)
    if group is None or group.num_remote_env_runners() == 0:
        return []
    if group.num_healthy_remote_env_runners() > 0:
        return []
    dead = []
    for actor_id, actor in group._worker_manager.actors().items():
        try:
            ray.get(actor.ping.remote(), timeout=PING_TIMEOUT_S)
        except ActorDiedError:
            dead.append(actor_id)
        except RayError:  # restarting, temporarily unavailable or slow: not dead yet
            continue
    return dead


def check_env_runners(algo: Any, *, iteration: int) -> None:
    """Raise `TrainingHealthError` when every remote env runner is permanently dead."""
    dead = dead_env_runner_ids(algo)
    total = algo.env_runner_group.num_remote_env_runners() if dead else 0
    if dead and len(dead) == total:
        limit = algo.config.max_num_env_runner_restarts
        raise TrainingHealthError(
            f"iteration {iteration}: all {total} env runner(s) crashed and were restarted the "
            f"maximum {limit} time(s); no env steps can be sampled any more, so training "
            "stopped. The env keeps raising: see the env runner errors in the log above."
        )
