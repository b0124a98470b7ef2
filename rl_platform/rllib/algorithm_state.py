"""Take and restore a stock RLlib Algorithm's full state without RLlib's pickle checkpoints.

`Algorithm.get_state()` is a tree of numpy arrays and plain values (weights, optimizer moments,
connector and metrics state); `state_codec` stores it as safetensors + JSON. The iteration
counter lives on the Trainable, outside that tree, so it is saved in the checkpoint's meta.
The one part RLlib keeps as pickle-readable strings, an observation filter's statistics, is
taken as arrays and handed back checked (`filter_state.py`).
"""

from typing import Any

import numpy as np

from rl_platform.base.errors import TrainingHealthError
from rl_platform.base.lifetime_steps import logged_lifetime_env_steps
from rl_platform.ray_runtime.rllib_internals import set_iteration
from rl_platform.rllib import filter_state
from rl_platform.storage.checkpoints import LoadedCheckpoint

ALGORITHM_PART = "algorithm"
MODULE_WEIGHTS_PATH = ("learner_group", "learner", "rl_module")


def module_weights(algorithm_state: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """`{module_id: {param_name: array}}` from an algorithm state tree."""
    node: Any = algorithm_state
    for key in MODULE_WEIGHTS_PATH:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    return {
        module_id: {k: v for k, v in params.items() if isinstance(v, np.ndarray)}
        for module_id, params in node.items()
        if isinstance(params, dict)
    }


def nonfinite_weights(algorithm_state: dict[str, Any]) -> list[str]:
    return [
        f"{module_id}/{name}"
        for module_id, params in module_weights(algorithm_state).items()
        for name, array in params.items()
        if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all()
    ]


def snapshot_algorithm(algo: Any) -> dict[str, Any]:
    """The parts to checkpoint; refuses to snapshot NaN/Inf weights (they never become latest)."""
    state = filter_state.as_arrays(algo.get_state())
    bad = nonfinite_weights(state)
    if bad:
        raise TrainingHealthError(
            f"refusing to checkpoint non-finite weights ({', '.join(bad[:3])}...); "
            "the previous checkpoint stays latest"
        )
    return {ALGORITHM_PART: state}


def state_for_rllib(checkpoint: LoadedCheckpoint) -> dict[str, Any]:
    """The checkpoint's algorithm state as `Algorithm.set_state` reads it, every part RLlib
    would unpickle checked first (`IntegrityError` naming the field otherwise)."""
    where = f"{checkpoint.path}/{ALGORITHM_PART}"
    return filter_state.for_rllib(checkpoint.parts[ALGORITHM_PART], where=where)


def restore_algorithm(algo: Any, checkpoint: LoadedCheckpoint) -> int:
    """Load a checkpoint into a freshly built algorithm; return the restored iteration."""
    algo.set_state(state_for_rllib(checkpoint))
    _resync_env_runners(algo)
    iteration = int(checkpoint.meta["iteration"])
    # Trainable keeps the counter outside get_state(); restore it so iterations continue.
    set_iteration(algo, iteration)
    return iteration


def _resync_env_runners(algo: Any) -> None:
    """Give the env runners the restored lifetime env-step count (their exploration timestep).

    `Algorithm.set_state` restores the env runners, then syncs them with the algorithm's metrics
    *before* those are restored, which resets the count to 0: the first resumed iteration would
    explore as at step 0 (e.g. DQN's epsilon back at 1.0). Repeat the sync RLlib does after every
    iteration, now with the restored metrics.
    """
    group = getattr(algo, "env_runner_group", None)
    if group is None:
        return
    group.sync_env_runner_states(
        config=algo.config,
        env_steps_sampled=logged_lifetime_env_steps(algo.metrics),
        env_to_module=algo.env_to_module_connector,
        module_to_env=algo.module_to_env_connector,
    )
