"""How a `ReplayStore` picks the rows of a batch: the interface, and uniform sampling.

A sampler draws flat row indices (`slot * num_envs + env`) with their importance weights,
hears which rows were just written (`added`), and keeps its own state for checkpoints. The
prioritized one is `rl_platform/replay/prioritized.py`; `training.replay` names which.
"""

from typing import Protocol

import torch


class Sampler(Protocol):
    def added(self, indices: torch.Tensor) -> None:
        """Rows `indices` (long, on the device) hold new transitions."""

    def sample(
        self, batch_size: int, *, size: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """`batch_size` row indices among the first `size` and their importance weights."""
        ...

    def state_dict(self, size: int) -> dict[str, torch.Tensor]:
        """What must be saved beside the first `size` rows to sample as before."""
        ...

    def load_state_dict(self, state: dict[str, torch.Tensor], size: int) -> None: ...


class UniformSampler:
    """Each stored transition with the same probability; every weight is 1."""

    def __init__(self, *, device: torch.device) -> None:
        self.device = device

    def added(self, indices: torch.Tensor) -> None:
        return None

    def sample(
        self, batch_size: int, *, size: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        # `size` is the host's own count of written rows: no device value is read here.
        indices = torch.randint(size, (batch_size,), generator=generator, device=self.device)
        return indices, torch.ones(batch_size, device=self.device)

    def state_dict(self, size: int) -> dict[str, torch.Tensor]:
        return {}

    def load_state_dict(self, state: dict[str, torch.Tensor], size: int) -> None:
        return None
