"""Small replay stores filled with recognisable transitions, for the replay tests."""

import gymnasium as gym
import torch

from rl_platform.replay.layout import layout_for
from rl_platform.replay.store import ReplayStore

OBS_DIM = 3
LAYOUT = layout_for(gym.spaces.Box(-1.0, 1.0, (OBS_DIM,)), gym.spaces.Discrete(4))


def transition(step: int, num_envs: int, *, ends: set[tuple[int, int]] = frozenset()) -> dict:
    """Step `step` of every env: obs `100 * env + step`, reward `step + env / 10`; `ends`
    holds (step, env) pairs that terminate (even env) or truncate (odd env) there."""
    envs = torch.arange(num_envs)
    value = (100 * envs + step).float()
    ended = torch.tensor([(step, int(e)) in ends for e in envs])
    return {
        "obs": value[:, None].expand(num_envs, OBS_DIM),
        "actions": (envs + step) % 4,
        "rewards": step + envs / 10,
        "next_obs": (value + 1)[:, None].expand(num_envs, OBS_DIM),
        "terminated": ended & (envs % 2 == 0),
        "truncated": ended & (envs % 2 == 1),
    }


def filled_store(
    steps: int, *, capacity: int = 12, num_envs: int = 3, ends=frozenset(), **kwargs
) -> ReplayStore:
    store = ReplayStore(layout=LAYOUT, capacity=capacity, num_envs=num_envs, device="cpu", **kwargs)
    for step in range(steps):
        store.add(**transition(step, num_envs, ends=ends))
    return store
