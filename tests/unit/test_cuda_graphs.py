"""The one CUDA-graph helper (rl_platform/utils/cuda_graphs.py) and its two users, the array
learner's captured update step and the array runner's acting step, on a machine without a GPU:
torch's CUDA stream and graph primitives are replaced by stand-ins that run the function, so
the capture path runs on the CPU. An out-of-memory error raised inside the capture reaches the
caller (the run's message names the settings to lower); any other capture error turns graphs
off with one warning and the work runs eagerly. The real captures are tested under the `gpu`
marker (tests/gpu/)."""

import contextlib
from typing import Any

import numpy as np
import pytest
import torch
from loguru import logger
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical

from rl_platform.env_runner.device_acting import ActingBuffers, ModuleActing
from rl_platform.learners.captured_step import WARMUP, CapturedStep
from rl_platform.learners.flat_batch import FlatBatch
from rl_platform.utils.cuda_graphs import GraphCapture, capacity, is_out_of_memory

OOM = "CUDA out of memory. Tried to allocate 2.00 GiB"
NOT_CAPTURABLE = "operation not permitted when stream is capturing"


class _Stream:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def wait_stream(self, other: Any) -> None:
        pass


class _Graph:
    def __init__(self) -> None:
        self.replays = 0

    def replay(self) -> None:
        self.replays += 1


@pytest.fixture
def cuda_stand_ins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams and graphs that simply run what they are given (no GPU here)."""
    monkeypatch.setattr(torch.cuda, "Stream", _Stream)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: _Stream())
    monkeypatch.setattr(torch.cuda, "stream", lambda stream: contextlib.nullcontext())
    monkeypatch.setattr(torch.cuda, "CUDAGraph", _Graph)
    monkeypatch.setattr(torch.cuda, "graph", lambda graph, pool=None: contextlib.nullcontext())


@pytest.fixture
def warnings() -> Any:
    messages: list[str] = []
    sink = logger.add(lambda message: messages.append(str(message)), level="WARNING")
    yield messages
    logger.remove(sink)


def _raises(error: BaseException):
    def fn() -> torch.Tensor:
        raise error

    return fn


def test_capacity_pads_to_a_power_of_two() -> None:
    assert [capacity(n) for n in (1, 2, 3, 8, 9)] == [1, 2, 4, 8, 16]
    assert capacity(3, minimum=8) == 8 and capacity(0) == 1


def test_out_of_memory_is_recognized_also_when_wrapped() -> None:
    assert is_out_of_memory(torch.OutOfMemoryError(OOM))
    assert is_out_of_memory(RuntimeError(f"ray.exceptions.RayTaskError: {OOM}"))
    assert not is_out_of_memory(RuntimeError(NOT_CAPTURABLE))


def test_a_recording_runs_the_warm_up_and_returns_the_graph(cuda_stand_ins) -> None:
    calls = []
    capture = GraphCapture("a step", warmup=2)
    graph, out = capture.record(lambda: calls.append(1) or torch.ones(1), device="cpu", rows=4)
    assert isinstance(graph, _Graph) and float(out) == 1.0 and len(calls) == 3


def test_an_out_of_memory_error_inside_the_capture_is_never_swallowed(cuda_stand_ins) -> None:
    capture = GraphCapture("a step", warmup=1)
    with pytest.raises(torch.OutOfMemoryError):
        capture.record(_raises(torch.OutOfMemoryError(OOM)), device="cpu", rows=8)
    assert capture.enabled


def test_another_capture_error_turns_graphs_off_with_one_warning(cuda_stand_ins, warnings) -> None:
    capture = GraphCapture("a step")
    assert capture.record(_raises(RuntimeError(NOT_CAPTURABLE)), device="cpu", rows=8) is None
    assert not capture.enabled
    assert len(warnings) == 1 and "a step runs without CUDA graphs" in warnings[0]
    assert NOT_CAPTURABLE in warnings[0]


class _Step:
    """An `UpdateStep` stand-in: runs on the real batch, fails on the capture's static one."""

    optimizers: list = []
    params: list = []

    def __init__(self, flat: FlatBatch, error: BaseException) -> None:
        self.flat, self.error, self.calls = flat, error, 0

    def __call__(self, flat: FlatBatch, index: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if flat is not self.flat:
            raise self.error
        return flat.advantages.index_select(0, index).sum()[None]


def _flat(size: int = 6) -> FlatBatch:
    return FlatBatch(
        obs=torch.zeros(size, 3),
        actions=torch.zeros(size, dtype=torch.int64),
        logp=torch.zeros(size),
        logits=torch.zeros(size, 2),
        advantages=torch.arange(size, dtype=torch.float32),
        value_targets=torch.zeros(size),
    )


def test_the_learners_captured_step_lets_an_out_of_memory_error_through(cuda_stand_ins) -> None:
    flat = _flat()
    captured = CapturedStep(_Step(flat, torch.OutOfMemoryError(OOM)))
    index = torch.arange(4)
    for _ in range(WARMUP):  # eager steps on a side stream
        captured(flat, index)
    with pytest.raises(torch.OutOfMemoryError):
        captured(flat, index)
    assert captured.graphs.enabled


def test_the_learners_captured_step_runs_eagerly_after_another_capture_error(
    cuda_stand_ins, warnings
) -> None:
    flat = _flat()
    step = _Step(flat, RuntimeError(NOT_CAPTURABLE))
    captured = CapturedStep(step)
    index = torch.arange(4)
    outs = [float(captured(flat, index)) for _ in range(WARMUP + 2)]
    assert outs == [6.0] * (WARMUP + 2)  # 0 + 1 + 2 + 3, eagerly
    assert not captured.graphs.enabled and captured._graph is None
    assert step.calls == WARMUP + 1 + 2 and len(warnings) == 1


class _Module:
    """An RLModule stand-in whose forward fails with `error` (as it would inside a capture)."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def get_exploration_action_dist_cls(self) -> type:
        return TorchCategorical

    def parameters(self) -> list[torch.Tensor]:
        return []

    def _forward_inference(self, batch: dict) -> dict:
        raise self.error


def test_the_acting_step_lets_an_out_of_memory_error_through(cuda_stand_ins) -> None:
    buffers = ActingBuffers(
        num_games=2, num_seats=1, device=torch.device("cpu"), initial_state=None
    )
    buffers.load(np.zeros((2, 1, 3), np.float32))
    acting = ModuleActing(_Module(torch.OutOfMemoryError(OOM)), buffers, graphs=False)
    acting.graphs.enabled = True  # the graph path, on a machine without CUDA
    with pytest.raises(torch.OutOfMemoryError):
        acting.act(np.array([0, 1]), explore=False)
    assert acting.graphs.enabled
