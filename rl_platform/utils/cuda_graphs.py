"""CUDA graphs for the array runner's acting step and the array learner's update step: the
scaffolding both need, written once (pure torch, no Ray).

PyTorch's "whole-network capture" (docs/source/notes/cuda.rst, "CUDA Graphs"): a function over
fixed shapes and fixed addresses is recorded once and replayed with one launch instead of
hundreds of kernels launched from Python. Around the recording, both users need:

- warm-up on a side stream (`on_side_stream`): lazy initializations (library handles, autograd
  buffers) happen before the capture and off the stream the capture will use;
- a capacity (`capacity`): batch sizes padded up to a power of two, so that a few graphs serve
  every size;
- a give-up (`GraphCapture.record`): a function that cannot be captured (an operation a graph
  does not allow, a host read inside it) runs eagerly from then on, with one warning in the
  log. An out-of-memory error is not such a case: it propagates (`is_out_of_memory`) to the
  run's message naming the settings to lower (rl_platform/run/train.py), instead of turning
  graphs off silently and running on at the edge of the device's memory.
"""

from collections.abc import Callable
from typing import Any, TypeVar

import torch
from loguru import logger

T = TypeVar("T")


def is_out_of_memory(exc: BaseException) -> bool:
    """torch's CUDA out-of-memory error, also when Ray wraps it (a remote learner's)."""
    return isinstance(exc, torch.OutOfMemoryError) or "CUDA out of memory" in str(exc)


def capacity(rows: int, *, minimum: int = 1) -> int:
    """The padded batch size a graph is captured for: the next power of two >= `rows`, and at
    least `minimum`."""
    return max(minimum, 1 << max(0, rows - 1).bit_length())


def on_side_stream(fn: Callable[[], T], device: torch.device) -> T:
    """`fn()` on a new side stream that waits for the current stream's work, and that the
    current stream then waits for."""
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        out = fn()
    torch.cuda.current_stream(device).wait_stream(side)
    return out


class GraphCapture:
    """Records one user's functions as CUDA graphs until a recording fails; then `enabled` is
    False for good and the user runs eagerly (module docstring)."""

    def __init__(
        self, what: str, *, enabled: bool = True, warmup: int = 0, pool: Any = None
    ) -> None:
        self.what = what
        """What is captured, as the log names it ("the array learner's update step")."""
        self.enabled = enabled
        self.warmup = warmup
        """Calls of `fn` on one side stream before each recording (their outputs dropped)."""
        self.pool = pool
        """The memory pool the graphs share (`torch.cuda.graph_pool_handle()`), or None."""

    def record(
        self, fn: Callable[[], T], *, device: torch.device, rows: int
    ) -> tuple[torch.cuda.CUDAGraph, T] | None:
        """`fn` warmed up, then recorded for `rows` padded rows: the graph (replay it to run
        `fn`; the recording did not) and `fn`'s outputs, which each replay rewrites in place.
        None when `fn` cannot be captured; an out-of-memory error propagates."""
        try:
            if self.warmup:
                on_side_stream(lambda: [fn() for _ in range(self.warmup)], device)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self.pool):
                out = fn()
        except RuntimeError as exc:  # torch.OutOfMemoryError is one too
            if is_out_of_memory(exc):
                raise
            self._give_up(exc)
            return None
        logger.debug("captured {} for {} rows", self.what, rows)
        return graph, out

    def _give_up(self, exc: RuntimeError) -> None:
        first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else "?"
        logger.warning("{} runs without CUDA graphs: capturing it failed ({})", self.what, first)
        self.enabled = False
