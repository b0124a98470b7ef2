"""Aggregated teacher labels (DAgger's dataset aggregation), replayed for extra BC steps (pure).

Every train batch of BC + PPO carries the teacher's action for each labelled step. Trained on
once (the PPO epochs), those labels are spent after one iteration, and at PPO's learning rate
and update budget the student needs far more env steps to clone the teacher than PPO needs to
learn alone (docs/bc.md, `benchmarks/bc_clone_fit.py`). DAgger (Ross et al. 2011,
https://arxiv.org/abs/1011.0686) instead trains on the union of all labelled states seen so
far. `LabelReplay` keeps the most recent `capacity` labelled steps and samples minibatches of
them for BC-only gradient steps between the PPO ones: more updates per env step, no more env
steps.

Rows are the leading dimension of the learner batch: single steps for feed-forward modules,
zero-padded [T] chunks (with their initial recurrent state) for recurrent ones, so the same
buffer serves the MLP, LSTM and transformer modules. Values are nested dicts of tensors
(observations may be dicts, recurrent states are). Storage is a preallocated ring on the
device of the first rows added.
"""

from collections.abc import Callable
from typing import Any

import torch

from rl_platform.imitation.slicing import BC_MODE, BCMode

LOSS_MASK = "loss_mask"
"""RLlib's `Columns.LOSS_MASK` (spelled out: this module does not import Ray)."""

Nested = torch.Tensor | dict[str, Any]
"""A tensor or a (nested) dict of tensors, all with the same leading (row) dimension."""


def map_nested(fn: Callable[..., torch.Tensor], first: Nested, *rest: Nested) -> Nested:
    """Apply `fn` leaf by leaf to nested dicts of the same structure."""
    if isinstance(first, dict):
        return {key: map_nested(fn, first[key], *(r[key] for r in rest)) for key in first}
    return fn(first, *rest)


def _leaves(tree: Nested) -> list[torch.Tensor]:
    if isinstance(tree, dict):
        return [leaf for value in tree.values() for leaf in _leaves(value)]
    return [tree]


class LabelReplay:
    """A bounded FIFO of labelled rows; `sample(n)` draws n rows uniformly with replacement."""

    def __init__(self, capacity_steps: int, *, seed: int = 0) -> None:
        if capacity_steps <= 0:
            raise ValueError(f"capacity_steps must be > 0, got {capacity_steps}")
        self.capacity_steps = capacity_steps
        self._storage: dict[str, Any] | None = None
        self._capacity_rows = 0
        self._next = 0
        self._rows = 0
        self._generator = torch.Generator(device="cpu").manual_seed(seed)

    def __len__(self) -> int:
        """Rows held."""
        return self._rows

    @property
    def steps_per_row(self) -> int:
        return 0 if self._storage is None else _steps_per_row(self._storage["labelled"])

    @property
    def labelled_steps(self) -> int:
        """Labelled steps in the rows held."""
        if self._storage is None:
            return 0
        return int(self._storage["labelled"][: self._rows].sum())

    def clear(self) -> None:
        """Forget every row (e.g. when the curriculum switches teachers)."""
        self._next = self._rows = 0

    def add(self, columns: dict[str, Any], *, labelled: torch.Tensor) -> int:
        """Keep the rows of `columns` with at least one labelled step; return how many.

        `labelled` ([rows] or [rows, T] bool) marks the labelled steps and is stored as the
        column "labelled". Rows beyond the capacity overwrite the oldest.
        """
        keep = labelled.reshape(labelled.shape[0], -1).any(dim=1)
        if not bool(keep.any()):
            return 0
        rows = {**columns, "labelled": labelled.bool()}
        rows = map_nested(lambda leaf: leaf[keep].detach(), rows)
        if self._storage is None:
            self._allocate(rows)
        count = int(keep.sum())
        if count > self._capacity_rows:  # only the newest rows fit
            rows = map_nested(lambda leaf: leaf[-self._capacity_rows :], rows)
            count = self._capacity_rows
        slots = (self._next + torch.arange(count)) % self._capacity_rows
        slots = slots.to(_leaves(self._storage)[0].device)
        write = lambda store, new: store.index_copy_(0, slots, new.to(store))  # noqa: E731
        map_nested(write, self._storage, rows)
        self._next = (self._next + count) % self._capacity_rows
        self._rows = min(self._rows + count, self._capacity_rows)
        return count

    def sample(self, rows: int) -> dict[str, Any]:
        """`rows` rows drawn uniformly (with replacement), including "labelled"."""
        if self._storage is None or self._rows == 0:
            raise ValueError("sample() from an empty LabelReplay")
        device = _leaves(self._storage)[0].device
        index = torch.randint(self._rows, (rows,), generator=self._generator).to(device)
        return map_nested(lambda leaf: leaf.index_select(0, index), self._storage)

    def _allocate(self, rows: dict[str, Any]) -> None:
        per_row = _steps_per_row(rows["labelled"])
        self._capacity_rows = max(1, -(-self.capacity_steps // per_row))
        self._storage = map_nested(
            lambda leaf: leaf.new_zeros((self._capacity_rows, *leaf.shape[1:])), rows
        )


def _steps_per_row(labelled: torch.Tensor) -> int:
    return int(labelled[0].numel()) if labelled.ndim > 1 else 1


def as_bc_only_batch(sample: dict[str, Any]) -> dict[str, Any]:
    """A replayed sample as a learner batch that enters only the BC term.

    Every labelled step is marked teacher-led (so no step enters the PPO ratio) and the loss
    mask is the labelled mask (unlabelled and padding steps drop out of the cross-entropy).
    """
    labelled = sample["labelled"]
    mode = torch.where(
        labelled,
        torch.full_like(labelled, BCMode.TEACHER_LED, dtype=torch.long),
        torch.full_like(labelled, BCMode.PLAIN, dtype=torch.long),
    )
    batch = {key: value for key, value in sample.items() if key != "labelled"}
    return {**batch, BC_MODE: mode, LOSS_MASK: labelled}
