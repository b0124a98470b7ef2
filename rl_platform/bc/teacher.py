"""The teacher on an env runner: a `Policy` loaded from its URI, reloaded when the URI changes.

Teachers come from `rl_platform.policies.load_policy` (scripted://, checkpoint://, league://,
random), acting greedily unless the URI says `?sample=true`. Stateful teachers (LSTMs) keep one
state per row key; keys of finished episodes are forgotten.
"""

from collections.abc import Hashable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from loguru import logger

from rl_platform.errors import UserError
from rl_platform.policies import EnvContext, Policy, load_policy


class Teacher:
    """Acts for the student's observations with the policy behind the current URI."""

    def __init__(
        self,
        *,
        env_id: str,
        observation_space: gym.Space,
        action_space: gym.Space,
        seed: int | None,
    ) -> None:
        if not isinstance(action_space, gym.spaces.Discrete):
            raise UserError(
                f"bc: the cross-entropy to the teacher needs a Discrete action space; "
                f"{env_id} has {action_space}"
            )
        self.context = EnvContext(env_id, observation_space, action_space)
        self.rng = np.random.default_rng(seed)
        self.uri: str | None = None
        self._policy: Policy | None = None
        self._keys: set[Hashable] = set()

    def policy(self, uri: str) -> Policy:
        if self._policy is None or uri != self.uri:
            logger.info("bc: teacher {}", uri)
            self._policy = load_policy(uri, env=self.context)
            self.uri = uri
            self._keys = set()
        return self._policy

    def act(
        self, uri: str, obs: Any, *, keys: Sequence[tuple], live_episodes: set[Hashable]
    ) -> np.ndarray:
        """The teacher's actions for a stacked batch of observations, one row per key.

        Keys are `(episode_id, ...)`; state of keys whose episode is not live is dropped.
        """
        policy = self.policy(uri)
        actions = np.asarray(policy.act(obs, self.rng, keys=keys)).reshape(len(keys))
        self._keys |= set(keys)
        finished = {key for key in self._keys if key[0] not in live_episodes}
        if finished:
            policy.forget(finished)
            self._keys -= finished
        return actions.astype(np.int64)
