"""Values, GAE and the learner batch of a `Rollout`, in the two layouts the two modes train on.

`prepare_batch` (eager): each game's fragment is cut at its game ends into sequences that start
from the state main had before their first frame, zero-padded with `seq_lens` (as RLlib's
AddTimeDimToBatchAndZeroPad, max_seq_len 32); their number changes with every iteration.

`prepare_fixed_batch` (captured): each game's fragment is one sequence of T frames from the
state main had before it, with `resets` [N, T] marking the frames a new game starts at (the
written-out LSTM and the attention window restart there: `net.encode(..., resets)`): fixed
shapes, what a CUDA graph needs, and no padding to mask.

Both: V(s) = critic(observation) in one flat pass; GAE (benchmarks/common/gae.py) on the device;
advantages standardized over the batch; state keys prefixed `STATE_IN`.
"""

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from benchmarks.common import compute_gae, standardize
from benchmarks.plain_recipe.config import RecipeConfig
from benchmarks.plain_recipe.net import rows_of, values_of
from benchmarks.plain_recipe.rollout import Rollout
from rl_platform.nets.transformer_lstm_net import State

STATE_IN = "state_in."
"""Prefix of the learner batch's state keys: sliced per minibatch like every other key."""


@dataclass(frozen=True)
class Sequences:
    """Where frame (t, n) of a [T, N] fragment lands in the padded learner batch [S, L]: each
    game's fragment is cut after each of its game ends; a game's sequences are consecutive."""

    seq: torch.Tensor
    """[T * N] sequence of each frame (row-major over [T, N])."""
    pos: torch.Tensor
    """[T * N] step of each frame within its sequence."""
    first: torch.Tensor
    """[N] the sequence that starts each game's fragment (its state is `Rollout.state0`)."""
    lengths: torch.Tensor
    """[S] real steps per sequence (`seq_lens`)."""

    @classmethod
    def cut(cls, done: np.ndarray, device: torch.device) -> "Sequences":
        starts = np.zeros_like(done)
        starts[0], starts[1:] = True, done[:-1]
        segment = np.cumsum(starts, axis=0) - 1  # [T, N] sequence within its game
        first = np.concatenate([[0], np.cumsum(segment[-1] + 1)[:-1]])
        seq = first + segment
        t = np.arange(done.shape[0])[:, None]
        pos = t - np.maximum.accumulate(np.where(starts, t, 0), axis=0)
        arrays = (seq, pos, first, np.bincount(seq.ravel()))
        return cls(*(torch.as_tensor(a.ravel(), dtype=torch.int64, device=device) for a in arrays))

    def pad(self, x: torch.Tensor) -> torch.Tensor:
        """[T, N, ...] -> [S, T, ...], zeros after each sequence's end."""
        out = x.new_zeros(self.lengths.shape[0], x.shape[0], *x.shape[2:])
        out[self.seq, self.pos] = x.reshape(-1, *x.shape[2:])
        return out


def advantages_of(
    net: nn.Module, rollout: Rollout, config: RecipeConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """Standardized advantages and value targets [T, N] of the fragment."""
    device, (frames, games) = rollout.obs.device, rollout.actions.shape
    # The critic reads the current observation only: [T + 1, N] in one flat pass.
    values = values_of(net, rollout.obs, config)
    truncated_values = torch.zeros(frames, games, device=device)
    for t, cut, final_obs in rollout.truncated_obs:
        final = torch.from_numpy(final_obs).to(device)[None]  # [1, games, 64]: a time axis
        truncated_values[t, cut] = values_of(net, final, config)[0]
    arrays = (rollout.rewards, rollout.terminated, rollout.truncated)
    rewards, terminated, truncated = (torch.from_numpy(a).to(device) for a in arrays)
    advantages, value_targets = compute_gae(
        values=values,
        rewards=rewards,
        terminated=terminated,
        truncated=truncated,
        truncated_values=truncated_values,
        gamma=config.training.gamma,
        lam=config.training.lambda_,
    )
    return standardize(advantages), value_targets


@torch.no_grad()
def prepare_batch(
    net: nn.Module, rollout: Rollout, initial: State, config: RecipeConfig
) -> dict[str, torch.Tensor]:
    """The padded sequence batch [S, L, ...] (module docstring)."""
    device, (frames, games) = rollout.obs.device, rollout.actions.shape
    advantages, value_targets = advantages_of(net, rollout, config)
    sequences = Sequences.cut(rollout.done, device)
    batch = {
        "obs": sequences.pad(rollout.obs[:-1]),
        "actions": sequences.pad(rollout.actions),
        "logp": sequences.pad(rollout.logp),
        "advantages": sequences.pad(advantages),
        "value_targets": sequences.pad(value_targets),
        "valid": sequences.pad(torch.ones(frames, games, device=device)),
        "seq_lens": sequences.lengths,
    }
    for key, value in rows_of(initial, sequences.lengths.shape[0]).items():
        value[sequences.first] = rollout.state0[key]
        batch[STATE_IN + key] = value
    return batch


@torch.no_grad()
def prepare_fixed_batch(
    net: nn.Module, rollout: Rollout, initial: State, config: RecipeConfig
) -> dict[str, torch.Tensor]:
    """One sequence per game [N, T, ...] with `resets` (module docstring). `initial` is
    unused: main's state was reset at each game end, so `state0` is right for every game."""
    del initial
    device = rollout.obs.device
    advantages, value_targets = advantages_of(net, rollout, config)
    resets = np.zeros_like(rollout.done)
    resets[1:] = rollout.done[:-1]  # a game that ended at frame t - 1 restarted at frame t
    batch = {
        "obs": rollout.obs[:-1],
        "actions": rollout.actions,
        "logp": rollout.logp,
        "advantages": advantages,
        "value_targets": value_targets,
        "valid": torch.ones_like(rollout.logp),
        "resets": torch.from_numpy(resets).to(device),
    }
    batch = {key: value.transpose(0, 1) for key, value in batch.items()}
    return batch | {STATE_IN + key: value for key, value in rollout.state0.items()}
