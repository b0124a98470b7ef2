"""n-step returns read at sample time from the rows that follow a sampled one.

Rows are stored `[slot, env]` and read flat, `row = slot * num_envs + env`: env `e`'s
transition after row `r` is row `r + num_envs` (modulo the store), so the window of a sampled
row is found by index arithmetic alone. For n steps from row `t`:

    R = sum_{k < m} gamma^k r_{t+k},   bootstrap from next_obs_{t+m-1} with gamma^m,

where `m <= n` stops after the first step that ends the episode (terminated or truncated:
the next row is another episode) and after the newest slot (the rows past it are not written
yet, or are the oldest ones, which the next add overwrites), so the newest rows have shorter
windows. `terminated`/`truncated` are those of the window's last step, and `m` is returned
for the bootstrap's gamma^m: what RLlib's episode buffers hand its learners (`n_step`,
rewards discounted inside the window: ray/rllib/utils/replay_buffers/
episode_replay_buffer.py). Read at sample time, nothing is pending between adds and a
checkpoint holds only the rows.

The store's tensors are tiny next to the per-op cost of an eager torch call (CartPole: a few
microseconds each, issue #57), so the window is read in as few ops as it takes: one flat
index per field, the newest slot folded into the episode ends, and the offsets and discounts
made once. The reads are `torch.take` and `index_select`, which skip advanced indexing's
general machinery (half the time of `x[rows]` on a CPU at this size).
"""

from dataclasses import dataclass

import torch

from rl_platform.replay.layout import REWARD_DTYPE


@dataclass(frozen=True)
class Window:
    """Where each sampled row's n-step window ends and what it earned."""

    rewards: torch.Tensor
    """[B] discounted reward sum over the window."""
    last_row: torch.Tensor
    """[B] the flat row of the window's last step (same env as the sampled row)."""
    steps: torch.Tensor
    """[B] float, the window's length `m` (1..n)."""


class WindowReader:
    """n-step windows over flat rows of `slots * num_envs` (module docstring)."""

    def __init__(
        self, *, slots: int, num_envs: int, n_step: int, gamma: float, device: torch.device
    ) -> None:
        if n_step > slots:
            raise ValueError(f"n_step {n_step} is longer than the store ({slots} slots)")
        self.rows, self.num_envs = slots * num_envs, num_envs
        steps = torch.arange(n_step, device=device)
        self.offsets = steps * num_envs
        """[n] from a row to its env's next `n - 1` rows."""
        self.discounts = gamma ** steps.to(REWARD_DTYPE)

    def read(
        self,
        *,
        rewards: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
        indices: torch.Tensor,
        newest_slot: int,
    ) -> Window:
        """`rewards`, `terminated`, `truncated` [slots * num_envs] flat views of the store;
        `indices` [B] the sampled rows; `newest_slot` the slot written last (host int)."""
        rows = (indices[:, None] + self.offsets) % self.rows
        # With n <= slots a window meets the newest slot before any row past it, so ending
        # the window there is "only rows written after the sampled one".
        newest = torch.floor_divide(rows, self.num_envs) == newest_slot
        ends = torch.take(terminated, rows) | torch.take(truncated, rows) | newest
        # Inside: no end strictly before this step (cumsum counts this step's own end).
        inside = torch.cumsum(ends, dim=1) <= ends
        length = inside.sum(dim=1)
        return Window(
            rewards=(torch.take(rewards, rows) * self.discounts * inside).sum(dim=1),
            last_row=(indices + (length - 1) * self.num_envs) % self.rows,
            steps=length.to(REWARD_DTYPE),
        )
