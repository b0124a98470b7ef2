"""The policy interface used by evaluation: `act(obs_batch, rng, keys=...) -> actions[B]`.

`obs_batch` is a stacked batch (an array, or a dict of arrays for Dict observations). `keys`
names the row owners (e.g. `(env_slot, agent_id)`): stateful policies (LSTMs, opponent
history windows) keep one state per key and `forget(keys)` drops it when an episode ends.
Stateless policies ignore both.
"""

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from rl_platform.base.observation_keys import ACTION_MASK_KEY


class Policy(Protocol):
    label: str

    def act(
        self, obs: Any, rng: np.random.Generator, *, keys: Sequence[Hashable]
    ) -> np.ndarray: ...

    def forget(self, keys: Iterable[Hashable]) -> None: ...


def stack_rows(rows: Sequence[Any]) -> Any:
    """Stack per-row observations (arrays or dicts of arrays) into one batch."""
    first = rows[0]
    if isinstance(first, Mapping):
        return {key: stack_rows([row[key] for row in rows]) for key in first}
    return np.stack([np.asarray(row) for row in rows])


def batch_size(obs: Any) -> int:
    if isinstance(obs, Mapping):
        return batch_size(next(iter(obs.values())))
    return len(obs)


class FunctionPolicy:
    """A stateless `act(obs, rng)` function (scripted agents)."""

    def __init__(self, label: str, act: Callable[[Any, np.random.Generator], np.ndarray]):
        self.label = label
        self._act = act

    def act(self, obs: Any, rng: np.random.Generator, *, keys: Sequence[Hashable]) -> np.ndarray:
        return np.asarray(self._act(obs, rng))

    def forget(self, keys: Iterable[Hashable]) -> None:
        pass


class RandomPolicy:
    """Uniform over the action space; only legal actions when observations carry a mask."""

    def __init__(self, label: str, action_space: gym.Space) -> None:
        self.label = label
        self.action_space = action_space

    def act(self, obs: Any, rng: np.random.Generator, *, keys: Sequence[Hashable]) -> np.ndarray:
        n = batch_size(obs)
        space = self.action_space
        if isinstance(obs, Mapping) and ACTION_MASK_KEY in obs:
            legal = np.asarray(obs[ACTION_MASK_KEY]).reshape(n, -1) > 0.5
            # Legal actions score in [1, 2), illegal ones in [0, 1): argmax picks a legal one.
            return (rng.random(legal.shape) + legal).argmax(axis=1).astype(np.int64)
        if isinstance(space, gym.spaces.Discrete):
            return space.start + rng.integers(0, space.n, size=n, dtype=np.int64)
        if isinstance(space, gym.spaces.Box):
            return rng.uniform(space.low, space.high, size=(n, *space.shape)).astype(space.dtype)
        if isinstance(space, gym.spaces.MultiDiscrete):
            return (rng.random((n, *space.nvec.shape)) * space.nvec).astype(np.int64)
        raise NotImplementedError(f"random policy: unsupported action space {space}")

    def forget(self, keys: Iterable[Hashable]) -> None:
        pass
