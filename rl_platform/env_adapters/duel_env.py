"""RLlib `MultiAgentEnv` adapter for the duel game (env id `rlp/Duel-v0`).

The only module of the duel package that imports Ray. Agents are `player_0` and `player_1`;
both act every step and the episode ends for both at once.
"""

from collections.abc import Mapping
from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from rl_platform.base.seed_tree import seed_for_copy
from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.envs.duel.render import render_game
from rl_platform.envs.duel.single_game import AGENT_IDS, SingleGame


class DuelMultiAgentEnv(MultiAgentEnv):
    """Takes an env_config dict with the duel settings (`max_steps`, `stocks`,
    `reward_weights`, `seed`, `spawn_jitter`) plus an optional `render_mode`
    ("rgb_array" or "ansi")."""

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        env_config = config if config is not None else {}
        kwargs = dict(env_config)
        self.render_mode = kwargs.pop("render_mode", None)
        kwargs["seed"] = seed_for_copy(env_config)  # every env copy its own seed
        self._game = SingleGame(**kwargs)
        self.possible_agents = list(AGENT_IDS)
        self.agents = list(AGENT_IDS)
        self.observation_spaces = {agent: observation_space() for agent in AGENT_IDS}
        self.action_spaces = {agent: action_space() for agent in AGENT_IDS}

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        obs = self._game.reset(seed=seed)
        self.agents = list(AGENT_IDS)
        return obs, {agent: {} for agent in AGENT_IDS}

    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        out = self._game.step(action_dict)
        terminateds = dict.fromkeys(AGENT_IDS, out.terminated)
        truncateds = dict.fromkeys(AGENT_IDS, out.truncated)
        terminateds["__all__"] = out.terminated
        truncateds["__all__"] = out.truncated
        if out.terminated or out.truncated:
            self.agents = []
        return out.obs, out.rewards, terminateds, truncateds, out.infos

    def render(self) -> np.ndarray | str | None:
        if self.render_mode in ("rgb_array", "ansi"):
            return render_game(self._game.core, self.render_mode)
        return None
