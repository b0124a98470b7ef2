"""Q-networks of the off-policy fast path (plain torch).

- `ContinuousQNet`: (obs, action) -> Q, one MLP over their concatenation, as RLlib's SAC
  builds its critics (ray/rllib/algorithms/sac/sac_catalog.py: the Q encoder reads
  concat[obs, action], then a linear head to 1). SAC holds two, plus two targets.
- `DiscreteQNet`: obs -> Q for every action; with `dueling`, Q = (A - mean_a A) + V (Wang et
  al. 2016, "Dueling Network Architectures", eq. 9), the two streams being linear heads on
  one trunk as RLlib's DQN builds them with empty `head_fcnet_hiddens`
  (ray/rllib/algorithms/dqn/torch/default_dqn_torch_rl_module.py, `_qf_forward_helper`).
"""

from collections.abc import Sequence

import torch
from torch import nn

from rl_platform.nets.blocks import MLP


class ContinuousQNet(nn.Module):
    def __init__(
        self, obs_dim: int, action_dim: int, hidden: Sequence[int], *, activation: str = "relu"
    ) -> None:
        super().__init__()
        self.trunk = MLP(obs_dim + action_dim, hidden, activation=activation)
        self.head = nn.Linear(self.trunk.out_dim, 1)

    def forward(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Q [B]."""
        return self.head(self.trunk(torch.cat([obs, actions], dim=-1))).squeeze(-1)


class DiscreteQNet(nn.Module):
    def __init__(
        self,
        obs_dim: int,
        num_actions: int,
        hidden: Sequence[int],
        *,
        dueling: bool,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.trunk = MLP(obs_dim, hidden, activation=activation)
        self.advantage = nn.Linear(self.trunk.out_dim, num_actions)
        self.value = nn.Linear(self.trunk.out_dim, 1) if dueling else None

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Q [B, num_actions]."""
        features = self.trunk(obs)
        advantages = self.advantage(features)
        if self.value is None:
            return advantages
        # RLlib's order of operations: (A - mean A) + V.
        return (advantages - advantages.mean(dim=-1, keepdim=True)) + self.value(features)
