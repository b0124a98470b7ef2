"""Refuse optimizer steps on NaN/Inf gradients instead of RLlib's nan_to_num-and-step.

RLlib's `TorchLearner.apply_gradients` zeroes non-finite gradients and steps anyway, which can
corrupt Adam's moments silently. Here the whole update is skipped and `health/nonfinite_update`
is logged so the driver stops the run with a clear message while the weights stay finite.
"""

from typing import Any

import torch
from ray.rllib.core import ALL_MODULES
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.utils.annotations import override
from ray.rllib.utils.torch_utils import clip_gradients

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.losses.ppo_diagnostics import all_finite


def fused_clip_gradients(
    gradients_dict: dict[Any, Any], *, grad_clip: float | None = None, grad_clip_by: str = ""
) -> Any:
    """RLlib's `clip_gradients` with `grad_clip_by: global_norm` in a few fused kernels (one
    norm and one multiply over all tensors, as `clip_grad_norm_` does) instead of one norm and
    one multiply per parameter; the same coefficient, `grad_clip / max(norm + 1e-6,
    grad_clip)`. A NaN or Inf gradient makes every gradient NaN here, which the guard then
    refuses (RLlib's version first turns non-finite norms into 1e9). Other modes: RLlib's."""
    if grad_clip_by != "global_norm" or grad_clip is None:
        return clip_gradients(gradients_dict, grad_clip=grad_clip, grad_clip_by=grad_clip_by)
    gradients = [g.detach() for g in gradients_dict.values() if g is not None]
    if not gradients:
        return torch.tensor(0.0)
    total_norm = torch.nn.utils.get_total_norm(gradients, foreach=True)
    coefficient = torch.clamp(grad_clip / (total_norm + 1e-6), max=1.0)
    torch._foreach_mul_(gradients, coefficient)
    return total_norm


class FiniteUpdateGuard(TorchLearner):
    """Mixin for any TorchLearner: skip the step when any gradient is non-finite; clip by
    global norm with fused kernels (`fused_clip_gradients`)."""

    @staticmethod
    @override(TorchLearner)
    def _get_clip_function() -> Any:
        return fused_clip_gradients

    @override(TorchLearner)
    def apply_gradients(self, gradients_dict: dict[Any, Any]) -> None:
        finite = all_finite(gradients_dict)
        self.metrics.log_value(
            (ALL_MODULES, HEALTH_NONFINITE_KEY), 0.0 if finite else 1.0, reduce="max", window=1
        )
        if not finite:
            return
        super().apply_gradients(gradients_dict)
