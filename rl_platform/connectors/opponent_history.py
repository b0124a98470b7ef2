"""Env-to-module connector that turns raw observations into {own obs, opponent history, mask}.

Per agent and step it splits the newest raw observation into own and opponent features
(`obs_split`), appends the opponent features to a rolling window of the last `history`
frames and writes the result back into the episode, in place of the raw observation:

    {"obs": own features [Ds], "opponent_history": [H, Do], "history_mask": [H]}
    (+ "action_mask" copied through when the raw observation is a Dict that has one)

Writing back (the pattern of RLlib's env-to-module `FlattenObservations`,
ray/rllib/connectors/common/flatten_observations.py) means the learner batches exactly the
observations the policy acted on, with no learner-side connector.

The connector keeps no state of its own: the previous window is read from the episode's
previous (already converted) observation, so episode chunking (`SingleAgentEpisode.cut`
keeps that observation in the lookback buffer), env-runner restarts and multiple vector
sub-envs need no bookkeeping. A window starts fresh at an episode's first observation
(`sa_episode.t == 0`).
"""

from collections.abc import Callable, Collection
from typing import Any

import gymnasium as gym
import numpy as np
from loguru import logger
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.typing import EpisodeType

from rl_platform.base.observation_keys import (
    ACTION_MASK_KEY,
    HISTORY_KEY,
    MASK_KEY,
    MASKED_OBS_KEY,
    SELF_KEY,
)
from rl_platform.nets.history_window import ObsSplit, push_frame, start_window


def is_converted(obs: Any) -> bool:
    """Whether `obs` already is this connector's output (guards against double processing)."""
    return isinstance(obs, dict) and HISTORY_KEY in obs and MASK_KEY in obs


class OpponentHistory(ConnectorV2):
    """Adds a rolling opponent-history window to each agent's observation (module docstring)."""

    def __init__(
        self,
        input_observation_space: gym.Space | None = None,
        input_action_space: gym.Space | None = None,
        *,
        history: int,
        obs_split: dict[str, Any],
        multi_agent: bool = False,
        agent_ids: Collection[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """`agent_ids` (multi-agent only): agents to convert; None converts all of them."""
        if history < 1:
            raise ValueError(f"history must be >= 1, got {history}")
        # Set before super().__init__: its space setter calls recompute_output_observation_space.
        self._history = history
        self._split = ObsSplit.from_config(obs_split)
        self._multi_agent = multi_agent
        self._agent_ids = set(agent_ids) if agent_ids is not None else None
        self._warned_unconverted_prev = False
        super().__init__(input_observation_space, input_action_space, **kwargs)

    def recompute_output_observation_space(
        self, input_observation_space: gym.Space, input_action_space: gym.Space
    ) -> gym.Space:
        if input_observation_space is None:
            return None
        if not self._multi_agent:
            return self._convert_space(input_observation_space)
        return gym.spaces.Dict(
            {
                aid: self._convert_space(space) if self._applies_to(aid) else space
                for aid, space in input_observation_space.spaces.items()
            }
        )

    def __call__(
        self,
        *,
        rl_module: RLModule,
        batch: dict[str, Any],
        episodes: list[EpisodeType],
        explore: bool | None = None,
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        for sa_episode in self.single_agent_episode_iterator(
            episodes, agents_that_stepped_only=True
        ):
            if not self._applies_to(sa_episode.agent_id):
                continue
            last = sa_episode.get_observations(-1)
            if is_converted(last):
                continue
            new_obs = self.convert_observation(last, previous=self._previous_window(sa_episode))
            sa_episode.set_observations(at_indices=-1, new_data=new_obs)
            # Like FlattenObservations: the episode's space must describe what it now stores.
            sa_episode.observation_space = self._space_for(sa_episode.agent_id)
        return batch

    def convert_observation(
        self, raw: Any, *, previous: tuple[np.ndarray, np.ndarray] | None
    ) -> dict[str, np.ndarray]:
        """Raw observation + previous (frames, mask) or None at episode start -> new obs."""
        own, opponent = self._split.split(raw)
        if previous is None:
            frames, mask = start_window(opponent, self._history)
        else:
            frames, mask = push_frame(previous[0], previous[1], opponent)
        out = {SELF_KEY: own, HISTORY_KEY: frames, MASK_KEY: mask}
        if isinstance(raw, dict) and ACTION_MASK_KEY in raw:
            out[ACTION_MASK_KEY] = np.asarray(raw[ACTION_MASK_KEY], dtype=np.float32)
        return out

    def _previous_window(self, sa_episode: Any) -> tuple[np.ndarray, np.ndarray] | None:
        if sa_episode.t == 0:
            return None
        try:
            # -2 reaches into the lookback buffer right after an episode cut.
            previous = sa_episode.get_observations(-2)
        except (IndexError, ValueError):
            previous = None
        if not is_converted(previous):
            if not self._warned_unconverted_prev:
                logger.warning(
                    "OpponentHistory: previous observation of an ongoing episode is missing "
                    "or was not converted; starting a fresh history window"
                )
                self._warned_unconverted_prev = True
            return None
        return previous[HISTORY_KEY], previous[MASK_KEY]

    def _applies_to(self, agent_id: Any) -> bool:
        return not self._multi_agent or self._agent_ids is None or agent_id in self._agent_ids

    def _space_for(self, agent_id: Any) -> gym.Space:
        return self.observation_space[agent_id] if self._multi_agent else self.observation_space

    def _convert_space(self, space: gym.Space) -> gym.spaces.Dict:
        own, opponent = _split_space(space, self._split)
        history_low = np.minimum(np.tile(opponent.low, (self._history, 1)), 0.0)
        history_high = np.maximum(np.tile(opponent.high, (self._history, 1)), 0.0)
        spaces: dict[str, gym.Space] = {
            SELF_KEY: own,
            HISTORY_KEY: gym.spaces.Box(history_low, history_high, dtype=np.float32),
            MASK_KEY: gym.spaces.Box(0.0, 1.0, (self._history,), np.float32),
        }
        if isinstance(space, gym.spaces.Dict) and ACTION_MASK_KEY in space.spaces:
            mask_space = space[ACTION_MASK_KEY]
            spaces[ACTION_MASK_KEY] = gym.spaces.Box(0.0, 1.0, mask_space.shape, np.float32)
        return gym.spaces.Dict(spaces)


def _flat_box(space: gym.Space, what: str) -> gym.spaces.Box:
    if not isinstance(space, gym.spaces.Box):
        raise ValueError(f"obs_split: the {what} part must be a Box space, got {space}")
    low = np.asarray(space.low, np.float32).reshape(-1)
    high = np.asarray(space.high, np.float32).reshape(-1)
    return gym.spaces.Box(low, high, dtype=np.float32)


def _split_space(space: gym.Space, split: ObsSplit) -> tuple[gym.spaces.Box, gym.spaces.Box]:
    if split.uses_keys:
        if not isinstance(space, gym.spaces.Dict):
            raise ValueError(f"obs_split uses dict keys but the observation space is {space}")
        return _flat_box(space[split.self_part], "self"), _flat_box(
            space[split.opponent_part], "opponent"
        )
    if isinstance(space, gym.spaces.Dict):
        space = space[MASKED_OBS_KEY]
    flat = _flat_box(space, "observation")
    parts = []
    for (start, end), what in ((split.self_part, "self"), (split.opponent_part, "opponent")):
        if end > flat.shape[0]:
            raise ValueError(f"obs_split.{what} [{start}, {end}] exceeds obs size {flat.shape[0]}")
        parts.append(gym.spaces.Box(flat.low[start:end], flat.high[start:end], dtype=np.float32))
    return parts[0], parts[1]


def make_history_connector_factory(
    *,
    history: int,
    obs_split: dict[str, Any],
    multi_agent: bool | None = None,
    agent_ids: Collection[Any] | None = None,
) -> Callable[..., OpponentHistory]:
    """A `config.env_runners(env_to_module_connector=...)` callable: (env, spaces, device).

    `multi_agent=None` detects a multi-agent env from the `env` RLlib passes in.
    """
    ObsSplit.from_config(obs_split)  # fail at config time, not inside an env runner

    def factory(env: Any = None, spaces: Any = None, device: Any = None) -> OpponentHistory:
        is_ma = _is_multi_agent_env(env) if multi_agent is None else multi_agent
        return OpponentHistory(
            history=history, obs_split=obs_split, multi_agent=is_ma, agent_ids=agent_ids
        )

    return factory


def _is_multi_agent_env(env: Any) -> bool:
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv

    if env is None:
        return False
    return isinstance(env, VectorMultiAgentEnv | MultiAgentEnv) or isinstance(
        getattr(env, "unwrapped", None), MultiAgentEnv
    )
