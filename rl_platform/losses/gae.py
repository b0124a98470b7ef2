"""Generalized advantage estimation over a time-major `[T, R]` grid, on any device (pure torch).

Schulman et al. 2016, "High-Dimensional Continuous Control Using Generalized Advantage
Estimation", eq. 16: A_t = sum_l (gamma * lambda)^l delta_{t+l}, with the TD residual
delta_t = r_t + gamma * (1 - terminated_t) * V(s_{t+1}) - V(s_t).

The array learner's rollout is a grid of R seat rows x T steps in which a row may hold several
trajectories (a game ends and the seat plays the next one). `boundary[t]` marks the last step
of each trajectory (its game ended, or the fragment ends at t = T - 1) so that the recursion
never carries an advantage across it; `next_values[t]` is V(s_{t+1}) as the caller resolved it:
the next row's value inside a trajectory, the value of the final observation where a game was
truncated, the value of the observation after the fragment at its end. The same recursion as
RLlib's `compute_value_targets` (ray/rllib/utils/postprocessing/value_predictions.py), which
the tests check row by row.
"""

import torch

from rl_platform.losses.ppo_diagnostics import masked_mean


def generalized_advantages(
    *,
    rewards: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    terminated: torch.Tensor,
    boundary: torch.Tensor,
    gamma: float,
    lambda_: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(advantages, value targets), each `[T, R]` float32; every input is `[T, R]`."""
    not_terminal = 1.0 - terminated.to(values.dtype)
    carries = gamma * lambda_ * (1.0 - boundary.to(values.dtype))
    deltas = rewards + gamma * not_terminal * next_values - values
    advantages = torch.empty_like(deltas)
    running = torch.zeros_like(deltas[0])
    for t in range(deltas.shape[0] - 1, -1, -1):
        running = deltas[t] + carries[t] * running
        advantages[t] = running
    return advantages, advantages + values


def standardized(values: torch.Tensor, weights: torch.Tensor, *, min_std: float = 1e-4):
    """`values` standardized by their mean and (population) std over the steps `weights` > 0,
    the std floored at `min_std` as RLlib's GAE connector does; no host read."""
    mean = masked_mean(values, weights)
    std = masked_mean((values - mean) ** 2, weights).sqrt()
    return (values - mean) / std.clamp_min(min_std)
