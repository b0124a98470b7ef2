"""A user's single-agent env, checked at every `reset` and `step` (no Ray).

A user's env that breaks is the user's to fix, so it must be reported as theirs: one line
naming the env, the call, the agent and the step, and either the env's own exception (with the
user's frames) or the Gymnasium contract it broke (the old gym API's 4-tuple, an observation of
the wrong shape, a non-finite observation, a reward that is not a number). `UserEnvError` is a
`UserError`, so `rlp` ends with exit 2 rather than a crash report.

`preflight` runs the same checks in the driver on a few steps before Ray starts, so an env that
breaks at once fails in seconds, with no run folder written.
"""

import numbers
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.utils.user_code import user_frames

AGENT = "agent"
"""The one agent of a single-agent env, as RLlib names it."""
PREFLIGHT_STEPS = 4


class UserEnvError(UserError):
    """A user's env raised or broke the Gymnasium API; the message is one line."""


def _space(space: gym.Space) -> str:
    if isinstance(space, gym.spaces.Box):
        return f"Box{space.shape} {space.dtype}"
    return str(space)


def _shape(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return f"{type(value).__name__} of shape {tuple(shape)}" if shape is not None else repr(value)


def observation_problem(space: gym.Space, obs: Any) -> str | None:
    """Why `obs` cannot be an element of `space` (shape, number, finiteness), or None.

    Bounds are not checked: envs that slightly overshoot a Box train fine, and RLlib reads
    the values as they are."""
    if isinstance(space, gym.spaces.Box):
        array = np.asarray(obs)
        if array.dtype.kind not in "biuf":
            return f"an observation of dtype {array.dtype}, expected numbers ({_space(space)})"
        if array.shape != space.shape:
            return (
                f"an observation of shape {array.shape}, expected {space.shape} ({_space(space)})"
            )
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            return f"a non-finite observation (NaN or inf) for {_space(space)}"
        return None
    if isinstance(space, gym.spaces.Discrete | gym.spaces.MultiDiscrete | gym.spaces.MultiBinary):
        return None if space.contains(np.asarray(obs, dtype=space.dtype)) else _outside(space, obs)
    if isinstance(space, gym.spaces.Dict):
        if not isinstance(obs, dict) or set(obs) != set(space.spaces):
            return f"an observation {_shape(obs)}, expected a dict with keys {sorted(space.spaces)}"
        return next(
            (p for k, s in space.spaces.items() if (p := observation_problem(s, obs[k]))), None
        )
    if isinstance(space, gym.spaces.Tuple):
        if not isinstance(obs, tuple | list) or len(obs) != len(space.spaces):
            return f"an observation {_shape(obs)}, expected a tuple of {len(space.spaces)}"
        return next(
            (p for s, o in zip(space.spaces, obs, strict=True) if (p := observation_problem(s, o))),
            None,
        )
    return None


def _outside(space: gym.Space, obs: Any) -> str:
    return f"an observation {_shape(obs)} outside {_space(space)}"


class CheckedEnv(gym.Wrapper):
    """The user's env with every `reset`/`step` result checked (see the module docstring)."""

    def __init__(self, env: gym.Env, env_id: str) -> None:
        super().__init__(env)
        self.env_id = env_id
        self.step_in_episode = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple:
        self.step_in_episode = 0
        result = self._call("reset", lambda: self.env.reset(seed=seed, options=options))
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
            got = f"a {len(result)}-tuple" if isinstance(result, tuple) else _shape(result)
            raise self._broke(
                "reset",
                f"returned {got}; Gymnasium's reset returns (observation, info) (the old gym "
                "API returned the observation alone: update the env to gymnasium>=0.26)",
            )
        self._check_observation("reset", result[0])
        return result

    def step(self, action: Any) -> tuple:
        self.step_in_episode += 1
        result = self._call("step", lambda: self.env.step(action))
        if not (isinstance(result, tuple) and len(result) == 5):
            count = f"{len(result)} values" if isinstance(result, tuple) else _shape(result)
            raise self._broke(
                "step",
                f"returned {count}; Gymnasium's step returns (observation, reward, terminated, "
                "truncated, info) (the old gym API returned 4: observation, reward, done, info)",
            )
        observation, reward = result[0], result[1]
        self._check_observation("step", observation)
        if (
            isinstance(reward, bool)
            or not isinstance(reward, numbers.Real | np.ndarray)
            or (isinstance(reward, np.ndarray) and reward.size != 1)
        ):
            raise self._broke("step", f"returned a reward {reward!r}; a reward is one number")
        return result

    def _call(self, name: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except UserError:
            raise
        except Exception as exc:
            raise self._broke(
                name, f"raised {type(exc).__name__}: {exc}{user_frames(exc)}"
            ) from None

    def _check_observation(self, name: str, observation: Any) -> None:
        problem = observation_problem(self.env.observation_space, observation)
        if problem is not None:
            raise self._broke(name, f"returned {problem}")

    def _broke(self, name: str, what: str) -> UserEnvError:
        where = f"agent {AGENT!r}, step {self.step_in_episode} of the episode"
        text = " ".join(f"env {self.env_id}: {name}() ({where}) {what}".split())
        return UserEnvError(text[:600])


def preflight(env: gym.Env, env_id: str, *, seed: int) -> None:
    """Reset `env` and take a few random steps through the checks, then close it."""
    checked = CheckedEnv(env, env_id)
    try:
        checked.reset(seed=seed)
        checked.action_space.seed(seed)
        for _ in range(PREFLIGHT_STEPS):
            _, _, terminated, truncated, _ = checked.step(checked.action_space.sample())
            if terminated or truncated:
                checked.reset()
    finally:
        close_product(env)


def close_product(product: object) -> None:
    """Close what a user's source built, if it can be closed (PettingZoo and Gymnasium envs
    can; a VectorGame need not)."""
    close = getattr(product, "close", None)
    if callable(close):
        close()
