"""One iteration's fragment of T frames x N games from main's seat, in preallocated buffers."""

from dataclasses import dataclass, field

import numpy as np
import torch

from benchmarks.plain_recipe.config import RecipeConfig
from benchmarks.plain_recipe.net import rows_of
from rl_platform.envs.duel import OBS_SIZE
from rl_platform.nets.transformer_lstm_net import State


@dataclass
class Rollout:
    """Tensors on the device; rewards and game ends on the host (where the game runs)."""

    obs: torch.Tensor
    """[T + 1, N, 64]; row T is the observation after the last frame (bootstrap)."""
    actions: torch.Tensor
    logp: torch.Tensor
    state0: State
    """Main's state [N, ...] before frame 0: where each game's first sequence starts."""
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    truncated_obs: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    """(frame, games, final observations) of games truncated at that frame."""

    @classmethod
    def allocate(cls, config: RecipeConfig, initial: State) -> "Rollout":
        frames, games, device = config.rollout, config.num_games, config.device
        return cls(
            obs=torch.zeros(frames + 1, games, OBS_SIZE, device=device),
            actions=torch.zeros(frames, games, dtype=torch.int64, device=device),
            logp=torch.zeros(frames, games, device=device),
            state0=rows_of(initial, games),
            rewards=np.zeros((frames, games), np.float32),
            terminated=np.zeros((frames, games), bool),
            truncated=np.zeros((frames, games), bool),
        )

    @property
    def done(self) -> np.ndarray:
        """[T, N] frames after which a game ended."""
        return self.terminated | self.truncated
