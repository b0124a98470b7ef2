"""From a `RolloutBatch` to the flat batch PPO's minibatches are drawn from (torch, on device).

Values of every step, of the observations after the fragment and of truncated games' final
observations come from one no-grad pass of the module's critic (`compute_values`, RLlib's
ValueFunctionAPI, as RLlib's GAE connector asks it); GAE runs over the `[T, R]` grid
(rl_platform/losses/gae.py) and the advantages are standardized over the valid steps. The
valid steps are then gathered once into `[M, ...]` tensors: the update's one host read is M.

One difference from RLlib's learner connectors, on purpose: RLlib appends an artificial step
to every episode chunk (`AddOneTsToEpisodesAndTruncate`) and standardizes the advantages over
the real and the artificial steps together; an artificial step's advantage carries the TD
residuals of whichever chunk follows it in the batch. Here the statistics are those of the
real steps only.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
from ray.rllib.core.columns import Columns

from rl_platform.losses.gae import generalized_advantages, standardized
from rl_platform.sampling.rollout_batch import RolloutBatch, Tensors

VALUE_CHUNK = 16384
"""Rows per no-grad critic pass (bounds the memory of the values pass)."""


def _map(fn: Any, value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: fn(item) for key, item in value.items()}
    return fn(value)


@dataclass
class FlatBatch:
    """The valid steps of one module's rollouts, `[M, ...]` each, on the learner's device."""

    obs: Tensors
    actions: torch.Tensor
    logp: torch.Tensor
    logits: torch.Tensor
    advantages: torch.Tensor
    value_targets: torch.Tensor

    @property
    def size(self) -> int:
        return int(self.actions.shape[0])

    def rows(self, index: torch.Tensor) -> "FlatBatch":
        """The minibatch at `index` (a device index tensor: no host read)."""
        return FlatBatch(
            obs=_map(lambda t: t.index_select(0, index), self.obs),
            **{
                name: getattr(self, name).index_select(0, index)
                for name in ("actions", "logp", "logits", "advantages", "value_targets")
            },
        )


@torch.no_grad()
def values_of(module: Any, obs: Tensors) -> torch.Tensor:
    """`module.compute_values` over `[B, ...]` observations, in chunks of `VALUE_CHUNK`."""
    size = next(iter(obs.values())).shape[0] if isinstance(obs, Mapping) else obs.shape[0]
    pieces = [
        module.compute_values({Columns.OBS: _map(lambda t, s=start: t[s : s + VALUE_CHUNK], obs)})
        for start in range(0, size, VALUE_CHUNK)
    ]
    return torch.cat(pieces).float()


def _steps(value: Tensors) -> Tensors:
    """`[T, R, ...]` -> `[T * R, ...]`."""
    return _map(lambda t: t.reshape(-1, *t.shape[2:]), value)


@torch.no_grad()
def flat_batch(module: Any, rollout: RolloutBatch, *, gamma: float, lambda_: float) -> FlatBatch:
    """Values, advantages and value targets of `rollout`, flattened to its valid steps."""
    steps, rows = rollout.valid.shape
    values = values_of(module, _steps(rollout.obs)).view(steps, rows)
    next_values = torch.cat([values[1:], values_of(module, rollout.last_obs)[None]])
    if rollout.final_obs is not None:
        final_values = values_of(module, _steps(rollout.final_obs)).view(steps, rows)
        next_values = torch.where(rollout.truncated, final_values, next_values)
    boundary = rollout.ended.clone()
    boundary[-1] = True
    advantages, targets = generalized_advantages(
        rewards=rollout.rewards.float(),
        values=values,
        next_values=next_values,
        terminated=rollout.terminated,
        boundary=boundary,
        gamma=gamma,
        lambda_=lambda_,
    )
    advantages = standardized(advantages, rollout.valid)
    index = rollout.valid.reshape(-1).nonzero()[:, 0]
    return FlatBatch(
        obs=_map(lambda t: t.index_select(0, index), _steps(rollout.obs)),
        actions=rollout.actions.reshape(-1).index_select(0, index),
        logp=rollout.logp.reshape(-1).index_select(0, index).float(),
        logits=_steps(rollout.logits).index_select(0, index).float(),
        advantages=advantages.reshape(-1).index_select(0, index),
        value_targets=targets.reshape(-1).index_select(0, index),
    )
