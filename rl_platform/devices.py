"""Pick the learner device for `resources.device` (CUDA > MPS > CPU for `auto`)."""

from typing import Literal

import torch

Device = Literal["cpu", "cuda", "mps"]


def resolve_device(requested: str) -> Device:
    """Return the device to train on; an explicit request for a missing device falls back to CPU."""
    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    if requested == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if requested == "cuda" and not cuda:
        return "cpu"
    if requested == "mps" and not mps:
        return "cpu"
    return requested  # type: ignore[return-value]
