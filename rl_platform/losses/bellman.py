"""The n-step Bellman target and the regression loss towards it, shared by DQN and SAC.

    y = r^(n) + gamma^n * (1 - terminated) * V(s_{t+n})

(Mnih et al. 2015, eq. 2; Hessel et al. 2018, "Rainbow", eq. 2 for n steps). `terminated`
masks the bootstrap and truncation does not: a step cut by a time limit still has a future,
read from its final observation. As RLlib's learners compute it
(ray/rllib/algorithms/dqn/torch/dqn_torch_learner.py, sac/torch/sac_torch_learner.py:
`rewards + gamma ** n_step * (1 - terminateds) * next_value`, detached).
"""

from typing import Literal

import torch
import torch.nn.functional as F

TDLoss = Literal["huber", "mse"]


def bellman_target(
    *,
    rewards: torch.Tensor,
    next_values: torch.Tensor,
    terminated: torch.Tensor,
    n_steps: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """y [B], detached: no gradient flows into the target's networks."""
    masked = (1.0 - terminated.float()) * next_values
    return (rewards + gamma**n_steps * masked).detach()


def td_loss(predictions: torch.Tensor, targets: torch.Tensor, kind: TDLoss) -> torch.Tensor:
    """Per-row regression loss: Huber with delta 1 (RLlib's `nn.HuberLoss()`, the default of
    DQN's `td_error_loss_fn` and SAC's only choice) or the squared error (`nn.MSELoss`, no 1/2)."""
    if kind == "huber":
        return F.huber_loss(predictions, targets, reduction="none", delta=1.0)
    return F.mse_loss(predictions, targets, reduction="none")
