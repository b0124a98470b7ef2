"""Gradients' global norm, its clip and the non-finite check: the one implementation of each,
for RLlib's learners (`FiniteUpdateGuard`, rl_platform/learners/finite_guard.py) and the array
learners' update steps (rl_platform/learners/update_step.py, clipped_adam.py). Pure torch.

The clip is RLlib's `grad_clip_by: global_norm` (ray/rllib/utils/torch_utils.py,
`clip_gradients`): every gradient times `grad_clip / max(norm + 1e-6, grad_clip)`, here in a
few fused kernels (one norm and one multiply over all tensors, as `clip_grad_norm_` does)
instead of one norm and one multiply per parameter. A NaN or Inf anywhere makes the global
norm non-finite, which is the guard's verdict: one fused norm and, where the host must decide,
one host read. (A check per tensor costs a GPU round trip per parameter, ~7% of a GPU
learner's iteration at the reference size.) A finite norm can only overflow to Inf for values
near float32's limit, which are refused as well.
"""

from collections.abc import Iterable

import torch


def global_norm(tensors: Iterable[torch.Tensor | None]) -> torch.Tensor:
    """The L2 norm over every element of `tensors` (None entries skipped); 0 for none."""
    # No gradient of the norm is wanted: one no_grad block instead of a detach per tensor.
    with torch.no_grad():
        present = [t for t in tensors if t is not None]
        return torch.nn.utils.get_total_norm(present, foreach=True)


def finite_flag(norm: torch.Tensor) -> torch.Tensor:
    """1.0 where `norm` is finite, else 0.0, on its device (no host read): the guard's verdict,
    which scales an update to nothing on the device (rl_platform/learners/device_adam.py)."""
    return torch.isfinite(norm).to(norm.dtype)


def clip_by_global_norm(
    gradients: list[torch.Tensor], *, grad_clip: float | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Scale `gradients` in place by RLlib's global-norm coefficient (module docstring; no
    clip when `grad_clip` is None); returns (their norm before the clip, `finite_flag`). A
    non-finite norm makes every gradient NaN, which the guard then refuses."""
    norm = global_norm(gradients)
    if grad_clip is not None and gradients:
        coefficient = torch.clamp(grad_clip / (norm + 1e-6), max=1.0)
        with torch.no_grad():
            torch._foreach_mul_(gradients, coefficient)
    return norm, finite_flag(norm)


def all_finite(tensors: dict[str, torch.Tensor] | list[torch.Tensor]) -> bool:
    """True if every tensor is free of NaN and Inf (None entries are ignored): the guard's
    verdict read by the host, once."""
    values = tensors.values() if isinstance(tensors, dict) else tensors
    return bool(finite_flag(global_norm(values)))
