"""The teacher on an env runner: a `Policy` loaded from its URI, reloaded when the URI changes.

Teachers come from `rl_platform.policies.load_policy` (scripted://, checkpoint://, league://,
random), acting greedily unless the URI says `?sample=true`, or from a preloaded spec, weights
and observation filter (`preload`: a teacher from the run itself, shipped by the driver because
remote env runners cannot read the run folder). Stateful teachers (LSTMs) keep one state per
row key; keys of finished episodes are forgotten.
"""

from collections.abc import Hashable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.policies import EnvContext, Policy, load_policy
from rl_platform.policies.loading import learned_policy
from rl_platform.policies.observation_filter import ObservationFilter
from rl_platform.spec.policy_uri import parse_policy_uri


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
        self._preloaded: tuple[str, Any, dict[str, np.ndarray], Any] | None = None

    def preload(
        self,
        uri: str,
        spec: Any,
        weights: dict[str, np.ndarray],
        *,
        observation_filter: ObservationFilter | None = None,
    ) -> None:
        """Act as `uri` with this run spec's model, these weights and (a run with
        `env.observation_filter`) its filter when asked for it."""
        self._preloaded = (uri, spec, weights, observation_filter)

    def _load(self, uri: str) -> Policy:
        if self._preloaded is None or self._preloaded[0] != uri:
            return load_policy(uri, env=self.context)
        _, spec, weights, observation_filter = self._preloaded
        sample = bool(parse_policy_uri(uri).sample)
        return learned_policy(
            spec,
            weights,
            env=self.context,
            sample=sample,
            label=uri,
            observation_filter=observation_filter,
        )

    def policy(self, uri: str) -> Policy:
        if self._policy is None or uri != self.uri:
            logger.info("bc: teacher {}", uri)
            self._policy = self._load(uri)
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
