"""The array learner's minibatch step replayed as one CUDA graph (PyTorch's "whole-network
capture", docs/source/notes/cuda.rst; LeanRL's `CudaGraphModule` does the same per step).

`UpdateStep` has fixed shapes and no host read, so forward, loss, backward, clip and Adam can
be recorded once and replayed for every minibatch: one launch instead of hundreds of kernels
launched from Python. What the capture needs and how it is met:

- inputs at fixed addresses: each update's flat batch is copied into static tensors of a
  capacity rounded up to a power of two (`_Static`, `capacity`), the minibatch index into a
  static index; a batch that outgrows the capacity is captured again;
- warm-up off the capture: the first `WARMUP` steps run eagerly on a side stream (they are real
  steps of the update, as LeanRL's warm-up calls are), the gradients are then set to None so
  that the capture allocates them from the graph's pool;
- nothing may move: parameters, gradients and Adam's state are read where they were captured.
  A loaded checkpoint or a new optimizer state (`load_state_dict` replaces tensors) changes
  their addresses; the step compares them before each replay and captures anew.

The side stream, the capacity and the give-up are rl_platform/utils/cuda_graphs.py's, which the
array runner's acting step uses too: a step that cannot be captured runs eagerly from then on,
with one warning in the log, and an out-of-memory error inside the capture propagates to the
run's message. On the CPU this class is never used (`resources.cuda_graphs: false` turns it
off on CUDA too).
"""

from dataclasses import fields

import torch

from rl_platform.learners.flat_batch import FlatBatch
from rl_platform.learners.update_step import UpdateStep
from rl_platform.sampling.rollout_batch import map_tensors
from rl_platform.utils.cuda_graphs import GraphCapture, capacity, on_side_stream

WARMUP = 2
"""Eager steps on a side stream before the capture (lazy initializations happen there)."""


class _Static:
    """A `FlatBatch` of `capacity` rows at fixed addresses; `load` copies a batch into it."""

    def __init__(self, like: FlatBatch, capacity: int) -> None:
        self.capacity = capacity

        def empty(t: torch.Tensor) -> torch.Tensor:
            return torch.zeros((capacity, *t.shape[1:]), dtype=t.dtype, device=t.device)

        self.batch = FlatBatch(
            **{f.name: map_tensors(empty, getattr(like, f.name)) for f in fields(like)}
        )

    def load(self, flat: FlatBatch) -> None:
        size = flat.size
        for f in fields(flat):
            source, target = getattr(flat, f.name), getattr(self.batch, f.name)
            if source is None:
                continue
            if isinstance(source, dict):
                for key, value in source.items():
                    target[key][:size].copy_(value)
            else:
                target[:size].copy_(source)


class CapturedStep:
    """`step` replayed as a CUDA graph (module docstring); same call as `UpdateStep`."""

    def __init__(self, step: UpdateStep) -> None:
        self.step = step
        self.graphs = GraphCapture("the array learner's update step")
        self._eager_steps = 0
        self._graph: torch.cuda.CUDAGraph | None = None
        self._static: _Static | None = None
        self._index: torch.Tensor | None = None
        self._out: torch.Tensor | None = None
        self._loaded: FlatBatch | None = None
        self._pointers: tuple[int, ...] = ()

    def __call__(self, flat: FlatBatch, index: torch.Tensor) -> torch.Tensor:
        if not self.graphs.enabled:
            return self.step(flat, index)
        if self._eager_steps < WARMUP:
            self._eager_steps += 1
            return on_side_stream(lambda: self.step(flat, index), index.device)
        if not self._ready_for(flat, index):
            return self._capture(flat, index)
        if self._loaded is not flat:
            self._static.load(flat)
            self._loaded = flat
        self._index.copy_(index)
        self._graph.replay()
        return self._out

    def _addresses(self) -> tuple[int, ...]:
        params = self.step.params
        state = [
            t.data_ptr()
            for opt in self.step.optimizers
            for s in opt.state.values()
            for t in s.values()
            if isinstance(t, torch.Tensor)
        ]
        return tuple(p.data_ptr() for p in params) + tuple(state)

    def _ready_for(self, flat: FlatBatch, index: torch.Tensor) -> bool:
        return (
            self._graph is not None
            and self._static is not None
            and flat.size <= self._static.capacity
            and self._index is not None
            and self._index.shape == index.shape
            and self._pointers == self._addresses()
        )

    def _capture(self, flat: FlatBatch, index: torch.Tensor) -> torch.Tensor:
        """Record the step on static inputs and run it by replaying; if it cannot be recorded,
        run it eagerly (as every later step will)."""
        rows = capacity(flat.size)
        if self._static is None or self._static.capacity < rows:
            self._static = _Static(flat, rows)
        self._static.load(flat)
        self._loaded = flat
        self._index = static_index = index.clone()
        static = self._static.batch
        self._clear_gradients()
        recorded = self.graphs.record(
            lambda: self.step(static, static_index), device=index.device, rows=rows
        )
        if recorded is None:
            self._graph = None
            self._clear_gradients()
            return self.step(flat, index)
        self._graph, self._out = recorded
        self._pointers = self._addresses()
        self._graph.replay()  # the capture recorded the step without running it
        return self._out

    def _clear_gradients(self) -> None:
        """Gradients to None: a capture allocates them from the graph's pool, and the eager
        step after a failed one from the caching allocator again."""
        for optimizer in self.step.optimizers:
            optimizer.zero_grad(set_to_none=True)
