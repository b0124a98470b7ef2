"""A context in which every way a tensor reaches the host raises: what "no host read" means
for a step that a CUDA graph can hold (the PPO, SAC and DQN steps are checked inside it)."""

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

HOST_READS = ("item", "__bool__", "cpu", "numpy", "tolist")


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
        yield
    finally:
        for name, method in saved.items():
            setattr(torch.Tensor, name, method)
