"""One sample call of the array runner as fixed-shape tensors for the array learner (no Ray).

`RolloutBatch` is what the array env runner hands the learner instead of episodes when the
array learner trains (`training.learner`, docs/vector_games.md "The array learner"): the
runner's own time-major rows, `[T, R]` with R = N games x P seats (row `game * P + seat`),
kept in the layout they were written in. No trajectory is cut and no episode object is built;
`valid` marks the steps at which a seat row decided for the trained module, and each row's
trajectories are delimited by `ended` (its game ended at that step) and the fragment's end.
Simultaneous-move games only (every seat acts at every step), so a valid step's next
observation is the same row's next step, or `final_obs` where its game ended, or `last_obs`
after the fragment.

RLlib's sampling loop counts a sample by `env_steps()` / `agent_steps()` of each item it gets
back, and hands the list to `Learner.update(episodes=...)` unchanged: that is all this object
has to satisfy to travel RLlib's PPO `training_step`.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import torch

from rl_platform.sampling.rollout import RolloutArrays

Tensors = torch.Tensor | dict[str, torch.Tensor]


def map_tensors(fn: Any, value: Any) -> Any:
    """`fn` over a tensor, or over each tensor of a dict of them (observations, states);
    None stays None."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {key: fn(item) for key, item in value.items()}
    return fn(value)


def _seat_rows(array: np.ndarray) -> torch.Tensor:
    """`[T, N, P, ...]` -> `[T, N * P, ...]` (a view where the array allows it)."""
    return torch.from_numpy(
        np.ascontiguousarray(array.reshape(array.shape[0], -1, *array.shape[3:]))
    )


def _per_seat(array: np.ndarray, num_seats: int) -> torch.Tensor:
    """`[T, N]` per-game flags -> `[T, N * P]`, one per seat row."""
    return torch.from_numpy(np.repeat(array, num_seats, axis=1))


_SCALARS = frozenset({"module_id", "num_env_steps", "seq_len"})
"""`RolloutBatch`'s fields that hold no tensor; `to` moves every other one."""


@dataclass
class RolloutBatch:
    """`[T, R, ...]` steps of one trained module (module docstring)."""

    module_id: str
    obs: Tensors
    """Model inputs each row acted on (zeros where the row did not decide for `module_id`)."""
    last_obs: Tensors
    """`[R, ...]` model inputs after the last step: the bootstrap observation."""
    final_obs: Tensors | None
    """Last observations of games that were truncated at each step; None if none was."""
    actions: torch.Tensor
    logp: torch.Tensor
    """Log-probability of each action under the acting policy."""
    logits: torch.Tensor
    """`[T, R, A]` the acting policy's logits (PPO's KL term reads them)."""
    rewards: torch.Tensor
    terminated: torch.Tensor
    ended: torch.Tensor
    """The row's game ended at this step (terminated or truncated)."""
    valid: torch.Tensor
    num_env_steps: int
    state_in: dict[str, torch.Tensor] | None = None
    """Recurrent modules: `[K, R, ...]` every row's state before steps 0, L, 2L, ... (L =
    `seq_len`), where the learner's sequences start; None for stateless modules."""
    seq_len: int = 0
    """The module's `max_seq_len` (0: stateless)."""
    columns: dict[str, torch.Tensor] = field(default_factory=dict)
    """Further `[T, R]` per-step columns the runner labelled (BC's teacher actions and modes,
    rl_platform/imitation/slicing.py)."""

    def env_steps(self) -> int:
        return self.num_env_steps

    def agent_steps(self) -> int:
        return int(self.valid.sum())

    def __len__(self) -> int:
        return self.num_env_steps

    @property
    def truncated(self) -> torch.Tensor:
        return self.ended & ~self.terminated

    def to(self, device: torch.device | str) -> "RolloutBatch":
        """The same batch with every tensor on `device`."""

        def move(value: Any) -> Any:
            return map_tensors(lambda t: t.to(device), value)

        moved = {
            f.name: move(getattr(self, f.name)) for f in fields(self) if f.name not in _SCALARS
        }
        return replace(self, **moved)


def rollout_batch(
    arrays: RolloutArrays,
    *,
    module_index: int,
    module_id: str,
    last_obs: Any,
    logp_key: str,
    logits_key: str,
    env_steps: int,
    state_in: dict[str, torch.Tensor] | None = None,
    seq_len: int = 0,
    columns: tuple[str, ...] = (),
) -> RolloutBatch:
    """The steps `arrays` recorded (rows 1..T; row 0 carries turn-based games' open
    transitions and is empty in simultaneous games) for module `module_index` of the runner;
    `columns` names the extras to pass on as per-step columns (those recorded)."""
    num_seats = arrays.decided.shape[2]
    steps = slice(1, arrays.steps + 1)
    truncated = arrays.truncated[steps]
    final_obs = None
    if truncated.any():
        final_obs = map_tensors(lambda v: _seat_rows(v[steps]), arrays.final_obs)
    return RolloutBatch(
        module_id=module_id,
        obs=map_tensors(lambda v: _seat_rows(v[steps]), arrays.obs),
        # A copy: a game may write its next observations into the same buffer, and with
        # `resources.overlap` the next rollout runs while the learner reads this one.
        last_obs=map_tensors(
            lambda v: torch.from_numpy(np.array(v.reshape(-1, *v.shape[2:]))), last_obs
        ),
        final_obs=final_obs,
        actions=_seat_rows(arrays.actions[steps]),
        logp=_seat_rows(arrays.extras[logp_key][steps]),
        logits=_seat_rows(arrays.extras[logits_key][steps]),
        rewards=_seat_rows(arrays.rewards[steps]),
        terminated=_per_seat(arrays.terminated[steps], num_seats),
        ended=_per_seat(arrays.ended[steps], num_seats),
        valid=_seat_rows(arrays.decided[steps] & (arrays.module[steps] == module_index)),
        num_env_steps=env_steps,
        state_in=state_in,
        seq_len=seq_len,
        columns={
            name: _seat_rows(arrays.extras[name][steps])
            for name in columns
            if name in arrays.extras
        },
    )


def rollout_batches(
    arrays: RolloutArrays,
    *,
    trained: list[tuple[int, str]],
    last_obs: Any,
    keys: tuple[str, str],
    env_steps: int,
    starts: list[dict[str, torch.Tensor]],
    seq_len: int,
    columns: Mapping[str, tuple[str, ...]] | None = None,
) -> list[RolloutBatch]:
    """One batch per trained (module index, module id) of a runner's rollout arrays; `keys`
    names the log-probability and logits extras, `starts` are the seats' states before every
    `seq_len`-th step (recurrent modules; empty otherwise), `columns` the extras passed on as
    per-step columns, by module id. The env steps count once."""
    state_in = (
        {key: torch.stack([start[key] for start in starts]) for key in starts[0]}
        if starts
        else None
    )
    return [
        rollout_batch(
            arrays,
            module_index=index,
            module_id=module_id,
            last_obs=last_obs,
            logp_key=keys[0],
            logits_key=keys[1],
            env_steps=env_steps if n == 0 else 0,
            state_in=state_in,
            seq_len=seq_len,
            columns=(columns or {}).get(module_id, ()),
        )
        for n, (index, module_id) in enumerate(trained)
    ]


def _cat(values: list[Tensors], dim: int) -> Tensors:
    if isinstance(values[0], Mapping):
        return {key: torch.cat([v[key] for v in values], dim=dim) for key in values[0]}
    return torch.cat(values, dim=dim)


def joined(parts: list[RolloutBatch]) -> RolloutBatch:
    """Several runners' batches of one module (the same T) as one: their rows side by side."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    step_fields = ("obs", "actions", "logp", "logits", "rewards", "terminated", "ended", "valid")
    final_obs = None
    if any(part.final_obs is not None for part in parts):
        # A part without truncations has no final observations; its rows are never read.
        final_obs = _cat([p.obs if p.final_obs is None else p.final_obs for p in parts], 1)
    return replace(
        first,
        **{name: _cat([getattr(p, name) for p in parts], 1) for name in step_fields},
        state_in=None if first.state_in is None else _cat([p.state_in for p in parts], 1),
        columns=_cat([p.columns for p in parts], 1) if first.columns else {},
        last_obs=_cat([p.last_obs for p in parts], 0),
        final_obs=final_obs,
        num_env_steps=sum(part.num_env_steps for part in parts),
    )
