"""Refuse a replay store that the device cannot hold, before allocating it.

A million Hopper transitions are ~0.1 GiB, a million Atari frames ~56 GiB: a capacity that
does not fit should fail at once with the figure, not as an OOM kill an hour into a run.
The CPU's available memory is read from /proc/meminfo (psutil is not one of our dependencies;
on a system without that file the check is skipped), a GPU's from the CUDA driver.
"""

from collections.abc import Callable
from pathlib import Path

import torch

from rl_platform.base.errors import UserError

MEMINFO = Path("/proc/meminfo")
HEADROOM = 0.8
"""The share of the available memory a store may take: the envs, the nets, the optimizers
and, on the CPU, Ray's object store need the rest."""
GIB = 1 << 30


def available_bytes(device: torch.device) -> int | None:
    """Memory free for a new allocation on `device`; None where it cannot be read."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free)
    if device.type != "cpu" or not MEMINFO.is_file():
        return None
    for line in MEMINFO.read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None


def largest_fitting(bytes_for: Callable[[int], int], budget: float, *, below: int) -> int:
    """The largest capacity under `below` whose `bytes_for` is within `budget` (0 if none);
    `bytes_for` grows with the capacity, not always in proportion (slots, the tree's power
    of two), hence a bisection."""
    low, high = 0, below
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if bytes_for(middle) <= budget else (low, middle - 1)
    return low


def check_fits(bytes_for: Callable[[int], int], *, capacity: int, device: torch.device) -> None:
    """Raise `UserError` when a store of `capacity` transitions (`bytes_for(capacity)`
    bytes) exceeds `HEADROOM` of what `device` has free."""
    needed, available = bytes_for(capacity), available_bytes(device)
    if available is None or needed <= HEADROOM * available:
        return
    fitting = largest_fitting(bytes_for, HEADROOM * available, below=capacity)
    raise UserError(
        f"the replay store needs {needed / GIB:.2f} GiB for {capacity} transitions, but "
        f"{device} has {available / GIB:.2f} GiB available (a store may take "
        f"{HEADROOM:.0%} of it): lower training.replay_capacity to at most {fitting}, "
        "or free memory"
    )
