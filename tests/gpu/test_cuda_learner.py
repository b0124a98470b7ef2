"""The array learner's minibatch step replayed as a CUDA graph against the same step run
eagerly, and the written-out LSTM against cuDNN's (`gpu` marker).

Tolerances: fp32, parameters after 16 minibatch steps within 1e-4 (TF32 is off for matmuls by
default; kernel choices may differ between the captured and the eager launch); bf16 (the
recipe's transformer precision), the per-step losses within 2e-2.
"""

from typing import Any

import pytest
import torch

from rl_platform.learners.captured_step import CapturedStep
from rl_platform.nets.blocks import LSTMCore
from tests.integration.test_array_learner import (
    LSTM_MODEL,
    MODULE,
    _batch,
    _learner,
    _sequences,
    _spec,
)

if not torch.cuda.is_available():  # named explicitly on a machine without one
    pytest.skip(
        "needs a CUDA GPU (tests/gpu is collected only where torch sees one; this file was named "
        "explicitly on a machine without)",
        allow_module_level=True,
    )
CUDA = torch.device("cuda")
GPU = {"resources": {"device": "cuda", "gpus_per_learner": 1}}


def _cuda_learner(model: dict | None = None) -> Any:
    spec = _spec(model_override=model)
    spec = spec.model_copy(update={"resources": spec.resources.model_copy(update=GPU["resources"])})
    learner = _learner(spec)
    assert learner._device.type == "cuda"
    return learner


def _on_cuda(flat: Any) -> Any:
    def move(value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, dict):
            return {k: v.to(CUDA) for k, v in value.items()}
        return value.to(CUDA)

    return type(flat)(**{name: move(value) for name, value in vars(flat).items()})


@pytest.mark.parametrize("model", [None, LSTM_MODEL], ids=["mlp", "lstm"])
def test_the_replayed_step_equals_the_eager_step_over_16_minibatches(ray_local, model) -> None:
    eager, replayed = _cuda_learner(model), _cuda_learner(model)
    replayed.module.set_state(eager.module.get_state())
    flat = _batch(256, seed=7) if model is None else _sequences(eager, rows=32, seq_len=4, seed=7)
    flat = _on_cuda(flat)
    rows = 32 if model is None else 4
    eager_step = eager._eager_step(MODULE)
    captured = replayed._update_step(MODULE)
    assert isinstance(captured, CapturedStep)
    generator = torch.Generator(device=CUDA).manual_seed(0)
    for _ in range(16):
        index = torch.randperm(flat.size, device=CUDA, generator=generator)[:rows]
        want, got = eager_step(flat, index), captured(flat, index)
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    assert captured._graph is not None  # the later steps were replays
    pairs = zip(
        eager.module[MODULE].parameters(), replayed.module[MODULE].parameters(), strict=True
    )
    for p_eager, p_replayed in pairs:
        torch.testing.assert_close(p_replayed, p_eager, rtol=1e-4, atol=1e-4)


def test_the_written_out_lstm_equals_cudnn_forward_and_backward() -> None:
    torch.manual_seed(0)
    core = LSTMCore(16, 32).to(CUDA)
    x = torch.randn(8, 32, 16, device=CUDA, requires_grad=True)
    state = (torch.randn(8, 32, device=CUDA), torch.randn(8, 32, device=CUDA))
    want, _ = core(x, state)
    (want_grad,) = torch.autograd.grad(want.square().sum(), x)
    got, _ = core(x, state, resets=torch.zeros(8, 32, dtype=torch.bool, device=CUDA))
    (got_grad,) = torch.autograd.grad(got.square().sum(), x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got_grad, want_grad, rtol=1e-4, atol=1e-4)


def test_an_optimizer_state_load_captures_anew(ray_local) -> None:
    learner = _cuda_learner()
    flat = _on_cuda(_batch(64, seed=8))
    step = learner._update_step(MODULE)
    for _ in range(4):
        step(flat, torch.arange(16, device=CUDA))
    graph = step._graph
    ((_, optimizer),) = learner.get_optimizers_for_module(MODULE)
    optimizer.load_state_dict(optimizer.state_dict())  # new tensors for the same state
    step(flat, torch.arange(16, device=CUDA))
    assert step._graph is not graph
