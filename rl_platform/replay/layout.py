"""What one stored transition holds, read once from the env's spaces, and what a store of
them costs in bytes.

Float observations are kept as float32 whatever the space says (MuJoCo's are float64): the
nets read float32, as RLlib's connectors hand them; integer observations (Atari frames) keep
their dtype, so a uint8 frame costs one byte. Box actions are float32, Discrete ones int64.
"""

import math
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch

REWARD_DTYPE = torch.float32
PRIORITY_DTYPE = torch.float64
"""The sum tree's dtype: priorities summed over a million leaves keep their proportions."""


@dataclass(frozen=True)
class TransitionLayout:
    """Shapes and dtypes of one transition's tensors."""

    obs_shape: tuple[int, ...]
    obs_dtype: torch.dtype
    action_shape: tuple[int, ...]
    action_dtype: torch.dtype

    def transition_bytes(self) -> int:
        """obs + next_obs + action + reward + terminated + truncated (one byte each flag)."""
        obs = math.prod(self.obs_shape) * _itemsize(self.obs_dtype)
        action = math.prod(self.action_shape) * _itemsize(self.action_dtype)
        return 2 * obs + action + _itemsize(REWARD_DTYPE) + 2


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def _obs_dtype(space: gym.spaces.Box) -> torch.dtype:
    if np.issubdtype(space.dtype, np.floating):
        return torch.float32
    return torch.from_numpy(np.zeros((), dtype=space.dtype)).dtype


def layout_for(observation_space: gym.Space, action_space: gym.Space) -> TransitionLayout:
    """The layout of a single-agent env with a Box observation and a Box or Discrete action."""
    if not isinstance(observation_space, gym.spaces.Box):
        raise TypeError(f"the replay store takes Box observations, not {observation_space}")
    if isinstance(action_space, gym.spaces.Box):
        action_shape, action_dtype = tuple(action_space.shape), torch.float32
    elif isinstance(action_space, gym.spaces.Discrete):
        action_shape, action_dtype = (), torch.int64
    else:
        raise TypeError(f"the replay store takes Box or Discrete actions, not {action_space}")
    return TransitionLayout(
        obs_shape=tuple(observation_space.shape),
        obs_dtype=_obs_dtype(observation_space),
        action_shape=action_shape,
        action_dtype=action_dtype,
    )


def slots_for(capacity: int, num_envs: int) -> int:
    """Rows of `num_envs` transitions that hold at least `capacity` transitions."""
    return -(-capacity // num_envs)


def tree_leaves(transitions: int) -> int:
    """Leaves of the sum tree over `transitions`: the next power of two."""
    return 1 << max(0, transitions - 1).bit_length()


def store_bytes(
    layout: TransitionLayout, capacity: int, *, num_envs: int, prioritized: bool
) -> int:
    """Bytes a `ReplayStore` allocates: its rows and, when prioritized, the sum tree (sums
    and minima, two nodes per leaf each)."""
    transitions = slots_for(capacity, num_envs) * num_envs
    tree = 2 * 2 * tree_leaves(transitions) * _itemsize(PRIORITY_DTYPE) if prioritized else 0
    return transitions * layout.transition_bytes() + tree
