"""n-step returns read at sample time from the rows that follow a sampled one.

Rows are stored `[slot, env]`: env `e`'s transition after `(t, e)` is `(t + 1, e)`, so the
window of a sampled row is found by index arithmetic alone. For n steps from row `t`:

    R = sum_{k < m} gamma^k r_{t+k},   bootstrap from next_obs_{t+m-1} with gamma^m,

where `m <= n` stops after the first step that ends the episode (terminated or truncated:
the next row is another episode) and before any row not written yet (the newest rows have
shorter windows). `terminated`/`truncated` are those of the window's last step, and `m` is
returned for the bootstrap's gamma^m: what RLlib's episode buffers hand its learners
(`n_step`, rewards discounted inside the window: ray/rllib/utils/replay_buffers/
episode_replay_buffer.py). Read at sample time, nothing is pending between adds and a
checkpoint holds only the rows.
"""

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Window:
    """Where each sampled row's n-step window ends and what it earned."""

    rewards: torch.Tensor
    """[B] discounted reward sum over the window."""
    last_slot: torch.Tensor
    """[B] the slot of the window's last step (same env as the sampled row)."""
    steps: torch.Tensor
    """[B] float, the window's length `m` (1..n)."""


def n_step_window(
    *,
    rewards: torch.Tensor,
    ends: torch.Tensor,
    slots: torch.Tensor,
    envs: torch.Tensor,
    written_after: torch.Tensor,
    n_step: int,
    gamma: float,
) -> Window:
    """`rewards`/`ends` [S, E] (ends: terminated | truncated) of the whole store; `slots`,
    `envs` [B] the sampled rows; `written_after` [B] how many rows of their env were written
    from the sampled one on (itself included, so >= 1)."""
    steps = torch.arange(n_step, device=slots.device)
    window_slots = (slots[:, None] + steps) % rewards.shape[0]
    window_rewards = rewards[window_slots, envs[:, None]]
    window_ends = ends[window_slots, envs[:, None]].to(torch.int32)
    ended_before = torch.cumsum(window_ends, dim=1) - window_ends
    inside = (steps < written_after[:, None]) & (ended_before == 0)
    discounts = gamma ** steps.to(window_rewards.dtype)
    length = inside.sum(dim=1)
    return Window(
        rewards=(window_rewards * discounts * inside).sum(dim=1),
        last_slot=(slots + length - 1) % rewards.shape[0],
        steps=length.to(window_rewards.dtype),
    )
