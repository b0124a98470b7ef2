"""The duel as a `VectorGame` (rl_platform/envs/vector_game.py): `DuelCore` with auto-reset.

Both seats act every frame. Seat p is the core's player p, so observations, rewards and
components are the core's own arrays; only the winner code changes (the core's 2 = draw).
"""

from typing import Any

import numpy as np

from rl_platform.envs.duel.config import REWARD_COMPONENTS
from rl_platform.envs.duel.core import DRAW as CORE_DRAW
from rl_platform.envs.duel.core import DuelCore
from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.envs.vector_game import DRAW, VectorReset, VectorStep


class DuelVectorGame:
    """`num_games` duels; keyword arguments are the duel settings (`max_steps`, `seed`, ...)."""

    num_seats = 2
    turn_based = False
    reward_components = REWARD_COMPONENTS

    def __init__(self, num_games: int, **settings: Any) -> None:
        self.core = DuelCore(num_games, auto_reset=True, **settings)
        self.num_games = num_games
        self.observation_space = observation_space()
        self.action_space = action_space()
        self._acting = np.ones((num_games, 2), bool)

    def reset(self, seed: int | None = None) -> VectorReset:
        return VectorReset(obs=self.core.reset(seed=seed), acting=self._acting.copy())

    def step(self, actions: np.ndarray) -> VectorStep:
        out = self.core.step(actions)
        winner = np.where(out.winner == CORE_DRAW, DRAW, out.winner).astype(np.int8)
        return VectorStep(
            obs=out.obs,
            rewards=out.rewards,
            terminated=out.terminated,
            truncated=out.truncated,
            winner=winner,
            acting=self._acting.copy(),
            components=out.components,
            final_obs=out.final_obs,
        )
