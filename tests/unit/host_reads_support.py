"""A context in which every way a tensor reaches the host raises: what "no host read" means
for a step that a CUDA graph can hold (the PPO, SAC and DQN steps are checked inside it).

Two doors: the Python methods that read a tensor, and torch's own `_local_scalar_dense`,
which a C++ binding calls where a tensor is passed for a Scalar argument (a 0-d tensor given
to `torch._foreach_add_`, say) without any Python method being called."""

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

HOST_READS = ("item", "__bool__", "cpu", "numpy", "tolist")


class _ScalarReadsRefused(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._local_scalar_dense.default:
            raise AssertionError("host read inside the step: a tensor read as a Scalar")
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def host_reads_refused() -> Iterator[None]:
    def refuse(name: str):
        def method(*args: Any, **kwargs: Any):
            raise AssertionError(f"host read inside the step: Tensor.{name}")

        return method

    saved = {name: getattr(torch.Tensor, name) for name in HOST_READS}
    try:
        for name in HOST_READS:
            setattr(torch.Tensor, name, refuse(name))
        with _ScalarReadsRefused():
            yield
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)
