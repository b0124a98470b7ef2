"""Test-only environments that misbehave on purpose (NaN rewards, crashes, extra kwargs).

Importable as `tests.reliability.faulty_envs` in Ray workers too (the repo root is on sys.path
through the editable install), so a remote env runner can build them after a restart.
"""

import time
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

NAN_REWARD_ENV_ID = "RlpTestNaNReward-v0"
KWARGS_ENV_ID = "RlpTestKwargsCartPole-v0"
FLAKY_ENV_NAME = "rlp_test_flaky_cartpole"


class NaNRewardCartPole(gym.Wrapper):
    """CartPole whose reward becomes NaN after `nan_after` steps (counted over all episodes)."""

    def __init__(self, nan_after: int = 0, **_: Any) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.nan_after = nan_after
        self.steps = 0

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.steps += 1
        if self.steps > self.nan_after:
            reward = float("nan")
        return obs, reward, terminated, truncated, info


class KwargsCartPole(gym.Wrapper):
    """CartPole that accepts arbitrary constructor kwargs (e.g. an API key) and records them."""

    seen: ClassVar[list[dict[str, Any]]] = []

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(gym.make("CartPole-v1"))
        KwargsCartPole.seen.append(kwargs)


class FlakyCartPole(gym.Wrapper):
    """CartPole that raises after `fail_after` steps, at most `fail_times` times in total.

    The failure count lives in `count_file` so that it survives the env runner's restart.
    """

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.count_file = Path(config["count_file"])
        self.fail_after = int(config["fail_after"])
        self.fail_times = int(config["fail_times"])
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.steps > self.fail_after:
            failures = failure_count(self.count_file)
            if failures < self.fail_times:
                self.count_file.write_text(str(failures + 1))
                raise RuntimeError(f"injected env failure #{failures + 1}")
        return self.env.step(action)


class HangingCartPole(gym.Wrapper):
    """CartPole whose `step()` never returns after `hang_after` steps (over all episodes), as a
    user env stuck on a socket or a lock; signal handlers still run while it waits."""

    def __init__(self, hang_after: int = 0, **_: Any) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.hang_after = hang_after
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        while self.steps > self.hang_after:
            time.sleep(1.0)
        return self.env.step(action)


class ShortObservationCartPole(gym.Wrapper):
    """CartPole that declares its 4-number observation space but returns only the first 2
    numbers (a user env whose `observation_space` and observations disagree)."""

    def __init__(self, **_: Any) -> None:
        super().__init__(gym.make("CartPole-v1"))

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        return obs[:2], info

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs[:2], reward, terminated, truncated, info


def push_against_the_pole(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A scripted CartPole agent (`scripted://tests.reliability.faulty_envs:...`): push the
    cart the way the pole leans (observation column 2)."""
    return (obs[:, 2] > 0).astype(np.int64)


def failure_count(count_file: Path) -> int:
    return int(count_file.read_text()) if count_file.is_file() else 0


def make_flaky(config: dict[str, Any]) -> FlakyCartPole:
    return FlakyCartPole(dict(config))


def make_nan_reward(**kwargs: Any) -> NaNRewardCartPole:
    return NaNRewardCartPole(**kwargs)


def make_kwargs_cartpole(**kwargs: Any) -> KwargsCartPole:
    return KwargsCartPole(**kwargs)


def register_gym_envs() -> None:
    """Register the driver-side test envs with Gymnasium (the spec reads its ids afresh).

    Factories, not the wrapper classes, are the entry points: Gymnasium reads `metadata` off a
    class entry point, and on a Wrapper class that is a property object.
    """
    if NAN_REWARD_ENV_ID not in gym.registry:
        gym.register(NAN_REWARD_ENV_ID, entry_point=make_nan_reward, max_episode_steps=500)
    if KWARGS_ENV_ID not in gym.registry:
        gym.register(KWARGS_ENV_ID, entry_point=make_kwargs_cartpole, max_episode_steps=500)
