"""One game of a `VectorGame` as an RLlib MultiAgentEnv: write the vectorized game alone and
RLlib's stock runner, `rlp eval`, `rlp watch` and tournaments play it too.

The game is built with `num_games=1`. Seats are `agent_ids` (default `player_<p>`), as the
array runner names them, so a policy trained on one runner plays on the other. Rewards follow
the array runner's transition rule (sampling/rollout.py): a seat's reward accumulates from its
decision until its next decision or the game's end, so a turn-based game pays a seat what it
earned while the other moved, on its next observation. At a game's end every seat gets its
`final_obs`, its reward and `info["outcome"]` (win / draw / loss by the game's `winner`), which
the league reads (league/routing.py).
"""

from collections.abc import Mapping
from typing import Any

import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from rl_platform.envs.vector_game import DRAW, Observations, VectorGame

_ALL = "__all__"


def seat_obs(obs: Observations, seat: int) -> Any:
    """Game 0's observation of `seat` (an array or a dict of arrays)."""
    if isinstance(obs, Mapping):
        return {key: np.asarray(value[0, seat]) for key, value in obs.items()}
    return np.asarray(obs[0, seat])


def outcome(winner: int, seat: int) -> str:
    if winner == DRAW:
        return "draw"
    return "win" if winner == seat else "loss"


class VectorGameEnv(MultiAgentEnv):
    """See the module docstring."""

    def __init__(self, game: VectorGame, *, seed: int | None = None) -> None:
        super().__init__()
        if game.num_games != 1:
            raise ValueError(f"VectorGameEnv plays one game, got num_games={game.num_games}")
        self.game = game
        self._seed = seed
        seats = getattr(game, "agent_ids", None) or [f"player_{p}" for p in range(game.num_seats)]
        self.possible_agents = list(seats)
        self.agents = list(seats)
        self.observation_spaces = dict.fromkeys(seats, game.observation_space)
        self.action_spaces = dict.fromkeys(seats, game.action_space)
        self._pending = np.zeros(game.num_seats, np.float64)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is None and self._seed is not None:
            seed, self._seed = self._seed, None  # seed only the first game; later ones follow
        start = self.game.reset(seed=seed)
        self._pending[:] = 0.0
        acting = np.flatnonzero(start.acting[0])
        obs = {self.possible_agents[p]: seat_obs(start.obs, p) for p in acting}
        return obs, {agent: {} for agent in obs}

    def step(self, action_dict: dict) -> tuple[dict, dict, dict, dict, dict]:
        actions = np.zeros((1, self.game.num_seats), np.int64)
        for seat, agent in enumerate(self.possible_agents):
            if agent in action_dict:
                actions[0, seat] = int(action_dict[agent])
        out = self.game.step(actions)
        self._pending += out.rewards[0]
        if bool(out.done[0]):
            return self._game_over(out)
        acting = np.flatnonzero(out.acting[0])
        obs = {self.possible_agents[p]: seat_obs(out.obs, p) for p in acting}
        rewards = {self.possible_agents[p]: float(self._pending[p]) for p in acting}
        self._pending[acting] = 0.0
        dones = {_ALL: False}
        return obs, rewards, dones, dict(dones), {agent: {} for agent in obs}

    def _game_over(self, out: Any) -> tuple[dict, dict, dict, dict, dict]:
        final = out.final_obs if out.final_obs is not None else out.obs
        agents = self.possible_agents
        obs = {agent: seat_obs(final, p) for p, agent in enumerate(agents)}
        rewards = {agent: float(self._pending[p]) for p, agent in enumerate(agents)}
        self._pending[:] = 0.0
        terminated, truncated = bool(out.terminated[0]), bool(out.truncated[0])
        winner = int(out.winner[0])
        infos = {agent: {"outcome": outcome(winner, p)} for p, agent in enumerate(agents)}
        return (
            obs,
            rewards,
            {**dict.fromkeys(agents, terminated), _ALL: terminated},
            {**dict.fromkeys(agents, truncated), _ALL: truncated},
            infos,
        )

    def close(self) -> None:
        close = getattr(self.game, "close", None)
        if callable(close):
            close()
