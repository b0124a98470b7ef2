"""SAC's policy: a Gaussian over pre-squash actions, squashed by tanh into [-1, 1]
(Haarnoja et al. 2018, arXiv:1801.01290, appendix C), as RLlib's `TorchSquashedGaussian`
computes it (ray/rllib/core/distribution/torch/torch_distribution.py):

- the net's output is RLlib's `ACTION_DIST_INPUTS` layout, [mean (d), log_std (d)], and
  log_std is clamped to [-5, 2] (`MIN_LOG_NN_OUTPUT`, `MAX_LOG_NN_OUTPUT`);
- a = clamp(((tanh(u) + 1) / 2) * (high - low) + low, low, high) with low = -1, high = 1
  (RLlib's SAC module builds the distribution without bounds), u = mean + std * noise;
- log pi(a) = sum_d [log N(u; mean, std) - 2 (log 2 - u - softplus(-2u))], the second term
  being log(1 - tanh(u)^2) in a form that stays finite where tanh saturates (Spinning Up).

The module's actions, the ones stored in the replay and read by the critics, stay in
[-1, 1]; only the env sees them scaled to its bounds (`to_env_bounds`, RLlib's
`unsquash_action` under `normalize_actions: True`, its default), so the log-probability
carries no Jacobian of that affine map, as in RLlib.
"""

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from rl_platform.nets.blocks import MLP

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0
"""RLlib's `MIN_LOG_NN_OUTPUT`, `MAX_LOG_NN_OUTPUT` (ray/rllib/utils/numpy.py)."""
LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))


def squash(unsquashed: torch.Tensor) -> torch.Tensor:
    """u -> a in [-1, 1], written as RLlib's `_squash` with low = -1, high = 1 (the same
    floating-point operations, so the same bits)."""
    low, high = -1.0, 1.0
    return torch.clamp(((torch.tanh(unsquashed) + 1.0) / 2.0) * (high - low) + low, low, high)


def squashed_sample(inputs: torch.Tensor, noise: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(a, log pi(a)) of `inputs` [B, 2d] for standard-normal `noise` [B, d]: the
    reparameterized sample (the gradient flows into `inputs`; detach for a plain one)."""
    mean, log_std = inputs.chunk(2, dim=-1)
    std = torch.clamp(log_std, LOG_STD_MIN, LOG_STD_MAX).exp()
    unsquashed = mean + noise * std
    # torch.distributions.Normal.log_prob, term for term.
    normal = -((unsquashed - mean) ** 2) / (2 * std**2) - std.log() - LOG_SQRT_2PI
    jacobian = 2.0 * (math.log(2.0) - unsquashed - F.softplus(-2.0 * unsquashed))
    return squash(unsquashed), normal.sum(-1) - jacobian.sum(-1)


def greedy_action(inputs: torch.Tensor) -> torch.Tensor:
    """tanh(mean): the policy's action without noise, in [-1, 1]. (RLlib's
    `to_deterministic` returns the unsquashed mean and leaves the clip to the env side.)"""
    return squash(inputs.chunk(2, dim=-1)[0])


def to_env_bounds(actions: torch.Tensor, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
    """[-1, 1] -> [low, high], clipped: RLlib's `unsquash_action`."""
    return torch.clamp(low + (actions + 1.0) * (high - low) / 2.0, low, high)


class SquashedGaussianActor(nn.Module):
    """obs -> MLP(hidden) -> linear -> [mean, log_std]; `sample` draws (a, log pi(a))."""

    def __init__(
        self, obs_dim: int, action_dim: int, hidden: Sequence[int], *, activation: str = "relu"
    ) -> None:
        super().__init__()
        self.action_dim = action_dim
        self.trunk = MLP(obs_dim, hidden, activation=activation)
        self.head = nn.Linear(self.trunk.out_dim, 2 * action_dim)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The distribution's inputs [B, 2 * action_dim]."""
        return self.head(self.trunk(obs))

    def sample(
        self, obs: torch.Tensor, *, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A reparameterized (a, log pi(a)) for each row of `obs`."""
        inputs = self(obs)
        noise = torch.randn(
            (*inputs.shape[:-1], self.action_dim),
            generator=generator,
            device=inputs.device,
            dtype=inputs.dtype,
        )
        return squashed_sample(inputs, noise)
