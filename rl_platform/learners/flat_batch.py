"""From a `RolloutBatch` to the flat batch PPO's minibatches are drawn from (torch, on device).

Values of every step, of the observations after the fragment and of truncated games' final
observations come from one no-grad pass of the module's critic (`compute_values`, RLlib's
ValueFunctionAPI, as RLlib's GAE connector asks it); GAE runs over the `[T, R]` grid
(rl_platform/losses/gae.py) and the advantages are standardized over the valid steps. The
valid steps are then gathered once into `[M, ...]` tensors: the update's one host read is M.
With BC's columns (a spec with `bc:`) the advantages are standardized over the steps PPO
learns from, the student's, and the teacher's actions and the modes travel with the steps.

One difference from RLlib's learner connectors, on purpose: RLlib appends an artificial step
to every episode chunk (`AddOneTsToEpisodesAndTruncate`) and standardizes the advantages over
the real and the artificial steps together; an artificial step's advantage carries the TD
residuals of whichever chunk follows it in the batch. Here the statistics are those of the
real steps only.
"""

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import torch
from ray.rllib.core.columns import Columns

from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION
from rl_platform.losses.bc import ppo_loss_mask
from rl_platform.losses.gae import generalized_advantages, standardized
from rl_platform.modules.recurrent_module import RESETS
from rl_platform.sampling.rollout_batch import RolloutBatch, Tensors, map_tensors

VALUE_CHUNK = 16384
"""Rows per no-grad critic pass (bounds the memory of the values pass)."""


@dataclass
class FlatBatch:
    """What PPO's minibatches are drawn from, on the learner's device: the valid steps
    `[M, ...]` of a stateless module, or the sequences `[S, L, ...]` of a recurrent one (each
    with its start state, its valid steps and the steps where an episode starts)."""

    obs: Tensors
    actions: torch.Tensor
    logp: torch.Tensor
    logits: torch.Tensor
    advantages: torch.Tensor
    value_targets: torch.Tensor
    valid: torch.Tensor | None = None
    """Sequences: `[S, L]` steps the loss reads."""
    resets: torch.Tensor | None = None
    """Sequences: `[S, L]` steps at which a new episode starts (the state restarts)."""
    state_in: dict[str, torch.Tensor] | None = None
    """Sequences: `[S, ...]` the state each sequence starts from."""
    behaviour_weights: torch.Tensor | None = None
    """Decoupled PPO (`with_proximal_policy`): pi_prox / pi_behaviour per step."""
    teacher_actions: torch.Tensor | None = None
    """BC (a spec with `bc:`): the teacher's action per step, -1 where none labelled it."""
    bc_mode: torch.Tensor | None = None
    """BC: who acted at each step (`BCMode`); teacher-led steps are BC's alone."""

    @property
    def size(self) -> int:
        """Rows: steps, or sequences."""
        return int(self.actions.shape[0])

    @property
    def steps_per_row(self) -> int:
        return 1 if self.actions.dim() == 1 else int(self.actions.shape[1])

    def rows(self, index: torch.Tensor) -> "FlatBatch":
        """The minibatch at `index` (a device index tensor: no host read)."""

        def take(value: Any) -> Any:
            return map_tensors(lambda t: t.index_select(0, index), value)

        # Every field is row-indexed (tensors, dicts of them or None): a new one is taken too.
        return FlatBatch(**{f.name: take(getattr(self, f.name)) for f in fields(self)})


@torch.no_grad()
def values_of(module: Any, obs: Tensors) -> torch.Tensor:
    """`module.compute_values` over `[B, ...]` observations (a time axis of one added for a
    recurrent module, whose critic reads the observation), in chunks of `VALUE_CHUNK`."""
    stateful = module.is_stateful()
    size = next(iter(obs.values())).shape[0] if isinstance(obs, Mapping) else obs.shape[0]
    pieces = []
    for start in range(0, size, VALUE_CHUNK):
        chunk = map_tensors(lambda t, s=start: t[s : s + VALUE_CHUNK], obs)
        if stateful:
            chunk = map_tensors(lambda t: t[:, None], chunk)
        values = module.compute_values({Columns.OBS: chunk})
        pieces.append(values[:, 0] if stateful else values)
    return torch.cat(pieces).float()


def _values_where(module: Any, obs: Tensors, where: torch.Tensor) -> torch.Tensor:
    """`[T, R]` values of the steps `where` marks, 0 elsewhere: the critic runs on the
    module's own steps only, not on the rows its opponents played. A valid step's next step
    is the same seat of the same game (simultaneous games), so it is valid too unless the
    game ended, where the final or the bootstrap observation's value is taken instead."""
    index = where.reshape(-1).nonzero()[:, 0]
    picked = map_tensors(lambda t: t.index_select(0, index), _steps(obs))
    values = torch.zeros(where.numel(), device=where.device)
    if len(index):  # (nonzero has read the count already)
        values[index] = values_of(module, picked)
    return values.view(where.shape)


def _steps(value: Tensors) -> Tensors:
    """`[T, R, ...]` -> `[T * R, ...]`."""
    return map_tensors(lambda t: t.reshape(-1, *t.shape[2:]), value)


def _sequences(value: Tensors, seq_len: int) -> Tensors:
    """`[T, R, ...]` -> `[K * R, L, ...]`: each row cut into K pieces of L steps (the last
    zero-padded), sequence `k * R + r` being row r's k-th piece."""

    def cut(t: torch.Tensor) -> torch.Tensor:
        steps, rows = t.shape[:2]
        pieces = -(-steps // seq_len)
        padded = torch.zeros((pieces * seq_len, rows, *t.shape[2:]), dtype=t.dtype, device=t.device)
        padded[:steps] = t
        moved = padded.view(pieces, seq_len, rows, *t.shape[2:]).transpose(1, 2)
        return moved.reshape(pieces * rows, seq_len, *t.shape[2:])

    return map_tensors(cut, value)


@torch.no_grad()
def flat_batch(module: Any, rollout: RolloutBatch, *, gamma: float, lambda_: float) -> FlatBatch:
    """Values, advantages and value targets of `rollout`: its valid steps, flattened, or its
    sequences with any valid step (recurrent modules)."""
    values = _values_where(module, rollout.obs, rollout.valid)
    next_values = torch.cat([values[1:], values_of(module, rollout.last_obs)[None]])
    if rollout.final_obs is not None:
        truncated = rollout.truncated & rollout.valid
        final_values = _values_where(module, rollout.final_obs, truncated)
        next_values = torch.where(truncated, final_values, next_values)
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
    columns = {
        "obs": rollout.obs,
        "actions": rollout.actions,
        "logp": rollout.logp.float(),
        "logits": rollout.logits.float(),
        "advantages": _standardized_advantages(advantages, rollout),
        "value_targets": targets,
    }
    if BC_MODE in rollout.columns:
        columns["bc_mode"] = rollout.columns[BC_MODE]
        columns["teacher_actions"] = rollout.columns[TEACHER_ACTION]
    if rollout.state_in is None:
        index = rollout.valid.reshape(-1).nonzero()[:, 0]
        return FlatBatch(
            **{
                k: map_tensors(lambda t: t.index_select(0, index), _steps(v))
                for k, v in columns.items()
            }
        )
    return _sequence_batch(rollout, columns)


def _standardized_advantages(advantages: torch.Tensor, rollout: RolloutBatch) -> torch.Tensor:
    """Standardized over the steps PPO learns from: the valid ones, less BC's teacher-led
    steps (whose actions were the teacher's; `StudentAdvantages` on RLlib's path), which get 0."""
    if BC_MODE not in rollout.columns:
        return standardized(advantages, rollout.valid)
    ppo_steps = ppo_loss_mask(bc_mode=rollout.columns[BC_MODE], loss_mask=rollout.valid)
    return torch.where(ppo_steps, standardized(advantages, ppo_steps), 0.0)


def _sequence_batch(rollout: RolloutBatch, columns: dict[str, Any]) -> FlatBatch:
    """The sequences of `rollout` that hold a valid step, with their start states."""
    seq_len = rollout.seq_len
    resets = torch.zeros_like(rollout.valid)
    resets[1:] = rollout.ended[:-1]  # a game that ended at t - 1 starts anew at t
    resets[::seq_len] = False  # a sequence's start state is already the new game's
    cut = {k: _sequences(v, seq_len) for k, v in columns.items()}
    valid = _sequences(rollout.valid, seq_len)
    index = valid.any(dim=1).nonzero()[:, 0]
    state_in = {k: v.reshape(-1, *v.shape[2:]) for k, v in rollout.state_in.items()}
    take = lambda v: map_tensors(lambda t: t.index_select(0, index), v)  # noqa: E731
    return FlatBatch(
        **{k: take(v) for k, v in cut.items()},
        valid=take(valid),
        resets=take(_sequences(resets, seq_len)),
        state_in=take(state_in),
    )


MAX_BEHAVIOUR_WEIGHT = 2.0
"""Bound of pi_prox / pi_behaviour (a guard against the rare step the older policy found
unlikely; one version of lag keeps the weights within ~[0.8, 1.25])."""


@torch.no_grad()
def with_proximal_policy(module: Any, flat: FlatBatch, *, rows: int) -> FlatBatch:
    """`flat` with the learner's current policy as the proximal one (decoupled PPO,
    rl_platform/losses/ppo.py): its log-probabilities and logits replace the acting policy's,
    which become the weights pi_prox / pi_behaviour. One no-grad pass, `rows` at a time."""
    logits = []
    for start in range(0, flat.size, rows):
        piece = flat.rows(
            torch.arange(start, min(start + rows, flat.size), device=flat.actions.device)
        )
        batch: dict[str, Any] = {Columns.OBS: piece.obs}
        if piece.state_in is not None:
            batch |= {Columns.STATE_IN: piece.state_in, RESETS: piece.resets}
        logits.append(module.forward_train(batch)[Columns.ACTION_DIST_INPUTS].float())
    prox_logits = torch.cat(logits)
    prox_logp = torch.log_softmax(prox_logits, dim=-1).gather(-1, flat.actions[..., None].long())[
        ..., 0
    ]
    weights = torch.exp(prox_logp - flat.logp).clamp(max=MAX_BEHAVIOUR_WEIGHT)
    return replace(flat, logp=prox_logp, logits=prox_logits, behaviour_weights=weights)
