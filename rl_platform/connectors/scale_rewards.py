"""Learner piece that scales PPO's rewards by the discounted return's spread (RLlib adapter).

`training.normalize_rewards`: the rule is `return_scale.py`'s. RLlib's new API stack has no
reward normaliser (its `clip_rewards` acts on the old stack only), so this piece rewrites the
rewards of the episodes before RLlib's default pieces batch them and GAE reads them, in copies
it makes (with a local env runner the learner is handed the runner's own episode objects): the
env runners' episodes, and every episode return reported, keep the env's rewards. PPO's
learner prepends `AddOneTsToEpisodesAndTruncate`, which runs first: it appends one bootstrap
step with reward 0 to every chunk and suffixes the episode id with `_<index>`,
so the last reward of each chunk is left out of the statistics and the id is read without
the suffix. The statistics are this piece's state, which the learner keeps in its own
(`learners/connector_state.py`), so a resumed run scales as the uninterrupted one.
"""

import copy
from typing import Any

import numpy as np
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.annotations import override
from ray.rllib.utils.typing import EpisodeType

from rl_platform.connectors.return_scale import ReturnScale

RETURNS_KEY = "returns"


class ScaleRewards(ConnectorV2):
    """Rewards divided by the running std of the discounted return, clipped (docstring)."""

    def __init__(self, *args: Any, gamma: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rule = ReturnScale(gamma=gamma)

    @override(ConnectorV2)
    def __call__(
        self,
        *,
        rl_module: RLModule,
        batch: dict[str, Any],
        episodes: list[EpisodeType],
        **kwargs: Any,
    ) -> Any:
        # Local env runner (`env_runners: 0`): these are the runner's own chunk objects, whose
        # returns it sums into `episode_return_mean` once an episode ends. Scaled in place,
        # every episode cut by an iteration boundary was reported with its earlier chunks'
        # rewards scaled (a sawtooth of wrong returns). Each piece after this one reads copies.
        episodes[:] = [_with_own_rewards(episode) for episode in episodes]
        for sa_episode in self.single_agent_episode_iterator(
            episodes, agents_that_stepped_only=False
        ):
            rewards = np.asarray(sa_episode.get_rewards(), dtype=np.float32)
            real = self.rule.scale(
                rewards[:-1],  # the last is AddOneTsToEpisodesAndTruncate's bootstrap step
                episode=sa_episode.id_.rpartition("_")[0] or sa_episode.id_,
                terminated=bool(sa_episode.is_terminated),
            )
            sa_episode.set_rewards(new_data=np.append(real, np.float32(0.0)))
        self.rule.end_batch()
        return batch

    @override(ConnectorV2)
    def get_state(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {RETURNS_KEY: self.rule.state()}

    @override(ConnectorV2)
    def set_state(self, state: dict[str, Any]) -> None:
        if RETURNS_KEY in state:  # a checkpoint taken before the statistics were kept has none
            self.rule.restore(state[RETURNS_KEY])


def _with_own_rewards(episode: EpisodeType) -> EpisodeType:
    """A shallow copy of `episode` (a multi-agent one: of each agent's) whose rewards buffer
    is its own: the observations and the rest stay shared, unread by this piece."""
    if isinstance(episode, MultiAgentEpisode):
        twin = copy.copy(episode)
        twin.agent_episodes = {
            agent: _with_own_rewards(agent_episode)
            for agent, agent_episode in episode.agent_episodes.items()
        }
        return twin
    twin = copy.copy(episode)
    twin.rewards = copy.deepcopy(episode.rewards)
    return twin


def reward_scaler(gamma: float) -> Any:
    """A `learner_connector` callable for `AlgorithmConfig.training`: RLlib calls it with the
    spaces and puts the piece before its default ones."""

    def factory(*args: Any, **kwargs: Any) -> ScaleRewards:
        return ScaleRewards(gamma=gamma)

    return factory
