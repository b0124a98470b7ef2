"""RLlib's action-masking observation space, recognised (no Ray import).

Its own module, below both the package (`mlp_module_class_for`) and `masked_mlp_module`, which
both ask the question: the module importing the package that imports it was a cycle.
"""

from typing import Any

from rl_platform.base.observation_keys import ACTION_MASK_KEY, MASKED_OBS_KEY


def is_action_mask_space(space: Any) -> bool:
    """RLlib's action-masking Dict `{"observations": Box, "action_mask": Box}`
    (ray/rllib/examples/rl_modules/classes/action_masking_rlm.py)."""
    import gymnasium as gym

    return (
        isinstance(space, gym.spaces.Dict)
        and set(space.spaces) == {MASKED_OBS_KEY, ACTION_MASK_KEY}
        and all(isinstance(sub, gym.spaces.Box) for sub in space.spaces.values())
    )
