"""GAE and advantage standardization with RLlib's semantics, shared by the plain-torch
yardsticks (`benchmarks/plain_torch_ppo.py`, `benchmarks/plain_torch_recipe.py`): torch only,
no Ray, nothing from rl_platform."""

import torch


def compute_gae(
    *,
    values: torch.Tensor,
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    truncated: torch.Tensor,
    truncated_values: torch.Tensor,
    gamma: float,
    lam: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Advantages and value targets [T, N] by GAE (Schulman et al. 2016, arXiv:1506.02438).

    `values` is [T + 1, N] (the last row bootstraps the fragment end). The next value of
    frame t is `values[t + 1]`, 0 after a termination and `truncated_values[t]` (the value
    of the game's final observation) after a truncation: `values[t + 1]` of a game that
    ended belongs to the next game, so it is never used then.
    """
    next_values = torch.where(truncated, truncated_values, values[1:])
    next_values = torch.where(terminated, 0.0, next_values)
    deltas = rewards + gamma * next_values - values[:-1]
    carry = gamma * lam * (~(terminated | truncated)).float()
    advantages = torch.zeros_like(deltas)
    last = torch.zeros_like(deltas[0])
    for t in reversed(range(deltas.shape[0])):
        last = deltas[t] + carry[t] * last
        advantages[t] = last
    return advantages, advantages + values[:-1]


def standardize(x: torch.Tensor) -> torch.Tensor:
    """RLlib's advantage standardization: population std, floored at 1e-4."""
    return (x - x.mean()) / x.std(correction=0).clamp(min=1e-4)
