"""PettingZoo `ParallelEnv` for one duel game (agents `player_0` and `player_1`)."""

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from loguru import logger
from pettingzoo import ParallelEnv

from rl_platform.envs.duel.actions import NUM_ACTIONS
from rl_platform.envs.duel.observation import OBS_BOUND, OBS_SIZE
from rl_platform.envs.duel.render import render_game
from rl_platform.envs.duel.rules import FPS
from rl_platform.envs.duel.single_game import AGENT_IDS, SingleGame

RENDER_MODES = ("rgb_array", "ansi")


def observation_space() -> spaces.Box:
    return spaces.Box(-OBS_BOUND, OBS_BOUND, shape=(OBS_SIZE,), dtype=np.float32)


def action_space() -> spaces.Discrete:
    return spaces.Discrete(NUM_ACTIONS)


class DuelParallelEnv(ParallelEnv):
    """Both agents act every frame; when the game ends both leave `agents` together.

    Keyword arguments are the game settings (`max_steps`, `stocks`, `reward_weights`, `seed`,
    `spawn_jitter`); infos carry `reward_components` and, on the last step, `outcome`.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "rlp_duel_v0",
        "render_modes": list(RENDER_MODES),
        "render_fps": FPS,
        "is_parallelizable": True,
    }

    def __init__(self, render_mode: str | None = None, **kwargs: Any) -> None:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.possible_agents = list(AGENT_IDS)
        self.agents: list[str] = []
        self._game = SingleGame(**kwargs)
        self.observation_spaces = {agent: observation_space() for agent in self.possible_agents}
        self.action_spaces = {agent: action_space() for agent in self.possible_agents}

    def observation_space(self, agent: str) -> spaces.Box:
        # PettingZoo requires the very same space object on every call (seeded sampling).
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        obs = self._game.reset(seed=seed)
        self.agents = list(self.possible_agents)
        return obs, {agent: {} for agent in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("the duel is over; call reset() before step()")
        out = self._game.step(actions)
        terminated = dict.fromkeys(self.agents, out.terminated)
        truncated = dict.fromkeys(self.agents, out.truncated)
        if out.terminated or out.truncated:
            self.agents = []
        return out.obs, out.rewards, terminated, truncated, out.infos

    def render(self) -> np.ndarray | str | None:
        if self.render_mode in ("rgb_array", "ansi"):
            return render_game(self._game.core, self.render_mode)
        logger.warning("DuelParallelEnv.render() called without a render_mode")
        return None

    def close(self) -> None:
        pass
