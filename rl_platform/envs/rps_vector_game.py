"""Repeated rock-paper-scissors (rps_history.py) as a `VectorGame`: N episodes in numpy.

The game is `RPSHistoryEnv` for N games at once, so the array env runner
(rl_platform/envs/vector_game.py) can train the history check without one gym env per game.
There is one seat: the hidden-strategy opponent is part of the game, not a policy, so it
keeps its strategy out of sight exactly as in the single env. Observation, action and reward
per game are RPSHistoryEnv's (`OBS_SPLIT`, Discrete(3), +1 / 0 / -1); every game is
truncated after `episode_len` rounds (never terminated) and restarts at once with a new
strategy.

`winner` is RUNNING during an episode; at its end seat 0 if its total reward is positive,
DRAW if zero, and 1 if negative: the hidden opponent counts as seat 1 (the only other party).
"""

import gymnasium as gym
import numpy as np

from rl_platform.envs.vector_game import DRAW, RUNNING, VectorReset, VectorStep

NUM_MOVES = 3
OBS_SIZE = 7
_PROGRESS = 3  # index of the episode-progress entry; the opponent's one-hot follows it
_OUTCOME = np.array([0.0, 1.0, -1.0], np.float32)  # by (action - opponent) % 3, as `outcome`
OPPONENTS = ("cyclic", "biased")


def outcomes(actions: np.ndarray, opponent: np.ndarray) -> np.ndarray:
    """`rps_history.outcome` elementwise: +1 where `actions` beat `opponent`, -1 where they lose."""
    return _OUTCOME[(actions - opponent) % NUM_MOVES]


class RPSHistoryVectorGame:
    """`num_games` repeated-RPS episodes against hidden strategies; see the module docstring.

    `strategy_move[g]` is game g's hidden strategy: the cyclic opponent's first move (it plays
    start, start + 1, ... mod 3) or the biased opponent's favourite move.
    """

    num_seats = 1
    turn_based = False
    reward_components = ("win_loss",)

    def __init__(
        self,
        num_games: int,
        *,
        opponent: str = "cyclic",
        episode_len: int = 20,
        bias: float = 0.8,
        reveal_history: bool = True,
        seed: int | None = None,
    ) -> None:
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {OPPONENTS}, got {opponent!r}")
        if episode_len < 1:
            raise ValueError(f"episode_len must be at least 1, got {episode_len}")
        self.num_games = num_games
        self.opponent = opponent
        self.episode_len = int(episode_len)
        self.bias = float(bias)
        self.reveal_history = bool(reveal_history)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.action_space = gym.spaces.Discrete(NUM_MOVES)
        self.rng = np.random.default_rng(seed)
        self.round = np.zeros(num_games, np.int64)
        self.strategy_move = np.zeros(num_games, np.int64)
        self.total = np.zeros(num_games, np.float32)  # reward so far, for `winner`
        self._acting = np.ones((num_games, 1), bool)

    def reset(self, seed: int | None = None) -> VectorReset:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self._restart(np.ones(self.num_games, bool))
        obs = np.zeros((self.num_games, 1, OBS_SIZE), np.float32)
        return VectorReset(obs=obs, acting=self._acting.copy())

    def step(self, actions: np.ndarray) -> VectorStep:
        own = self._own_moves(actions)
        opponent = self._opponent_moves()
        reward = outcomes(own, opponent)
        self.round += 1
        self.total += reward
        obs = self._observe(own, opponent)
        truncated = self.round >= self.episode_len
        winner = np.full(self.num_games, RUNNING, np.int8)
        winner[truncated] = np.select(
            [self.total[truncated] > 0, self.total[truncated] == 0], [0, DRAW], 1
        )
        final_obs = obs.copy() if truncated.any() else None
        self._restart(truncated)
        obs[truncated] = 0.0  # a new episode: nothing played yet, progress 0
        rewards = reward[:, None]
        return VectorStep(
            obs=obs,
            rewards=rewards,
            terminated=np.zeros(self.num_games, bool),
            truncated=truncated,
            winner=winner,
            acting=self._acting.copy(),
            components={"win_loss": rewards.copy()},
            final_obs=final_obs,
        )

    def _own_moves(self, actions: np.ndarray) -> np.ndarray:
        actions = np.asarray(actions)
        if actions.shape != (self.num_games, 1):
            raise ValueError(f"actions must have shape {(self.num_games, 1)}, got {actions.shape}")
        own = actions[:, 0].astype(np.int64)
        bad = (own < 0) | (own >= NUM_MOVES)
        if bad.any():
            raise ValueError(f"rock-paper-scissors moves are 0, 1, 2; got {own[bad][:5]}")
        return own

    def _opponent_moves(self) -> np.ndarray:
        """This round's hidden moves, by RPSHistoryEnv's rules (`_opponent_move`)."""
        if self.opponent == "cyclic":
            return (self.strategy_move + self.round) % NUM_MOVES
        favourite = self.rng.random(self.num_games) < self.bias
        uniform = self.rng.integers(NUM_MOVES, size=self.num_games)
        return np.where(favourite, self.strategy_move, uniform)

    def _observe(self, own: np.ndarray, opponent: np.ndarray) -> np.ndarray:
        """[N, 1, 7] as `RPSHistoryEnv._obs(own, opponent)` after this round."""
        games = np.arange(self.num_games)
        obs = np.zeros((self.num_games, OBS_SIZE), np.float32)
        obs[games, own] = 1.0
        obs[:, _PROGRESS] = self.round / self.episode_len
        if self.reveal_history:
            obs[games, _PROGRESS + 1 + opponent] = 1.0
        return obs[:, None, :]

    def _restart(self, games: np.ndarray) -> None:
        """New episodes where `games` is True: round 0 and a freshly drawn hidden strategy."""
        self.round[games] = 0
        self.total[games] = 0.0
        self.strategy_move[games] = self.rng.integers(NUM_MOVES, size=int(games.sum()))
