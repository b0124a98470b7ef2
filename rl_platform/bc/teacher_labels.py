"""Env-to-module piece: the teacher's action for every student observation, and its env slice.

Runs first in the env-to-module pipeline, on the raw observations (before e.g. the
transformer's opponent-history piece rewrites them in the episodes). For every agent about to
act that the cloned module controls, it asks the teacher for an action and decides the step's
`BCMode` from the env's vector index (`rl_platform.imitation.slicing`). The result goes to
`shared_data[LABELS_KEY]` as `{(episode_id[, agent_id]): (teacher_action, mode)}`, where the
module-to-env piece `TeacherLedActions` picks it up after the module's forward pass (RLlib
passes the same `shared_data` dict to both pipelines of an env runner, see
ray/rllib/env/single_agent_env_runner.py).

Settings (teacher URI, slice fractions) come from `settings_at(bc_spec, env_steps)`; the
driver pushes new ones with `apply_settings` (see `rl_platform.bc.callback`).
"""

from collections.abc import Collection, Iterator
from typing import Any

import gymnasium as gym
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.annotations import override

from rl_platform.bc.teacher import Teacher
from rl_platform.imitation.schedule import BCSettings
from rl_platform.imitation.slicing import mode_for_env
from rl_platform.policies.base import stack_rows

LABELS_KEY = "rlp_bc_labels"


def agent_spaces(
    observation_space: gym.Space, action_space: gym.Space, *, multi_agent: bool
) -> tuple[gym.Space, gym.Space]:
    """One agent's spaces (multi-agent pipelines see Dict spaces keyed by agent id)."""
    if not multi_agent:
        return observation_space, action_space
    return next(iter(observation_space.values())), next(iter(action_space.values()))


class TeacherLabels(ConnectorV2):
    """Labels each acting agent of the cloned module with the teacher's action and a mode."""

    def __init__(
        self,
        input_observation_space: gym.Space | None = None,
        input_action_space: gym.Space | None = None,
        *,
        settings: BCSettings,
        env_id: str,
        multi_agent: bool,
        modules: Collection[str] = (),
        seed: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.settings = settings
        self.env_id = env_id
        self.multi_agent = multi_agent
        self.modules = frozenset(modules)
        self.seed = seed
        self._teacher: Teacher | None = None

    def apply_settings(self, settings: BCSettings) -> None:
        self.settings = settings

    def teacher(self) -> Teacher:
        """The teacher (built on first use from this piece's spaces)."""
        if self._teacher is None:
            obs_space, act_space = agent_spaces(
                self.input_observation_space, self.input_action_space, multi_agent=self.multi_agent
            )
            self._teacher = Teacher(
                env_id=self.env_id,
                observation_space=obs_space,
                action_space=act_space,
                seed=self.seed,
            )
        return self._teacher

    def _mode(self, index: int, *, num_envs: int) -> int:
        return mode_for_env(
            index,
            num_envs=num_envs,
            teacher_led=self.settings.teacher_led,
            student_led=self.settings.student_led,
        )

    def _rows(self, episodes: list[Any]) -> Iterator[tuple[tuple, int, Any]]:
        """(label key, env index, observation) of every agent the cloned module acts for."""
        for index, episode in enumerate(episodes):
            if not isinstance(episode, MultiAgentEpisode):
                yield (episode.id_,), index, episode.get_observations(-1)
                continue
            if episode.is_done:
                continue
            observations = episode.get_observations(-1)
            for agent_id in sorted(episode.get_agents_to_act(), key=str):
                if episode.module_for(agent_id) in self.modules:
                    yield (episode.id_, agent_id), index, observations[agent_id]

    @override(ConnectorV2)
    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        rows = list(self._rows(episodes)) if explore and shared_data is not None else []
        if not rows:
            return batch
        if self.settings.teacher is None:  # a phase without a teacher: every step plain PPO
            shared_data[LABELS_KEY] = {}
            return batch
        keys = [key for key, _, _ in rows]
        actions = self.teacher().act(
            self.settings.teacher,
            stack_rows([obs for _, _, obs in rows]),
            keys=keys,
            live_episodes={episode.id_ for episode in episodes},
        )
        shared_data[LABELS_KEY] = {
            key: (int(action), int(self._mode(index, num_envs=len(episodes))))
            for (key, index, _), action in zip(rows, actions, strict=True)
        }
        return batch
