"""Pick the learner device for `resources.device` (CUDA > MPS > CPU for `auto`); refuse a GPU
layout (`resources.acting_device: cuda`) where there is no GPU."""

from typing import Literal

import torch

from rl_platform.base.errors import UserError

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


def require_acting_device(
    acting_device: str, *, profiles_setting_it: list[str], cuda: bool | None = None
) -> None:
    """Refuse `resources.acting_device: cuda` on a machine without CUDA: acting on the CPU
    instead would be a different, far slower layout than the one asked for."""
    cuda = torch.cuda.is_available() if cuda is None else cuda
    if acting_device != "cuda" or cuda:
        return
    profiles = " or ".join(f"--profile {name}" for name in profiles_setting_it)
    source = f" (set by {profiles})" if profiles else ""
    raise UserError(
        f"resources.acting_device is cuda{source}, but this machine has no CUDA GPU "
        f"(torch {torch.__version__}, torch.cuda.is_available() is False); train without "
        f"{profiles or 'it'} or set resources.acting_device: cpu"
    )
