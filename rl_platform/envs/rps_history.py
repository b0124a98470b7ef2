"""Repeated rock-paper-scissors against a hidden opponent strategy (gymnasium, single agent).

The opponent follows a fixed strategy drawn at reset and never shown directly: only its past
moves reveal it, so a policy must read the opponent history to beat it. Used to check that the
transformer_lstm model actually uses the opponent history.

Observation: Box(0, 1, (7,)) = [own last move one-hot (3), episode progress (1) | opponent's
last move one-hot (3)], i.e. `obs_split = {"self": [0, 4], "opponent": [4, 7]}`
(`OBS_SPLIT`). Zeros before the first round. With `reveal_history=False` the opponent part is
always zero (the control: same model, history zeroed).

Action: Discrete(3) (0 rock, 1 paper, 2 scissors). Reward +1 win, 0 draw, -1 loss.

Opponent strategies (`opponent`):
- "cyclic": plays start, start + 1, start + 2, ... (mod 3) with a random start per episode.
  Knowing its last move wins every later round; without it the expected return is 0.
- "biased": plays a per-episode favourite move with probability `bias`, else uniformly.
"""

from typing import Any

import gymnasium as gym
import numpy as np

OBS_SPLIT = {"self": [0, 4], "opponent": [4, 7]}
_NUM_MOVES = 3


def outcome(action: int, opponent: int) -> float:
    """+1 if `action` beats `opponent` (paper > rock > scissors > paper), -1 if it loses."""
    diff = (action - opponent) % _NUM_MOVES
    return {0: 0.0, 1: 1.0, 2: -1.0}[diff]


class RPSHistoryEnv(gym.Env):
    """See the module docstring. `config` keys: opponent, episode_len, bias, reveal_history."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        config = dict(config or {})
        self.opponent = config.get("opponent", "cyclic")
        if self.opponent not in ("cyclic", "biased"):
            raise ValueError(f"opponent must be 'cyclic' or 'biased', got {self.opponent!r}")
        self.episode_len = int(config.get("episode_len", 20))
        self.bias = float(config.get("bias", 0.8))
        self.reveal_history = bool(config.get("reveal_history", True))
        self.observation_space = gym.spaces.Box(0.0, 1.0, (7,), np.float32)
        self.action_space = gym.spaces.Discrete(_NUM_MOVES)
        self._round = 0
        self._strategy_move = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._round = 0
        self._strategy_move = int(self.np_random.integers(_NUM_MOVES))
        return self._obs(None, None), {}

    def _opponent_move(self) -> int:
        if self.opponent == "cyclic":
            return (self._strategy_move + self._round) % _NUM_MOVES
        if self.np_random.random() < self.bias:
            return self._strategy_move
        return int(self.np_random.integers(_NUM_MOVES))

    def _obs(self, own: int | None, opponent: int | None) -> np.ndarray:
        obs = np.zeros(7, np.float32)
        if own is not None:
            obs[own] = 1.0
        obs[3] = self._round / self.episode_len
        if opponent is not None and self.reveal_history:
            obs[4 + opponent] = 1.0
        return obs

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        opponent = self._opponent_move()
        reward = outcome(int(action), opponent)
        self._round += 1
        truncated = self._round >= self.episode_len
        return self._obs(int(action), opponent), reward, False, truncated, {"opponent": opponent}
