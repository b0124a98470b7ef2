"""Refuse optimizer steps on NaN/Inf gradients instead of RLlib's nan_to_num-and-step.

RLlib's `TorchLearner.apply_gradients` zeroes non-finite gradients and steps anyway, which can
corrupt Adam's moments silently. Here the whole update is skipped and `health/nonfinite_update`
is logged so the driver stops the run with a clear message while the weights stay finite.
"""

from typing import Any

from ray.rllib.core import ALL_MODULES
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.utils.annotations import override
from ray.rllib.utils.torch_utils import clip_gradients

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.learners.gradients import all_finite, clip_by_global_norm


def fused_clip_gradients(
    gradients_dict: dict[Any, Any], *, grad_clip: float | None = None, grad_clip_by: str = ""
) -> Any:
    """RLlib's `clip_gradients` with `grad_clip_by: global_norm` in a few fused kernels
    (`clip_by_global_norm`, the same coefficient); returns the norm as RLlib's does. A NaN or
    Inf gradient makes every gradient NaN here, which the guard then refuses (RLlib's version
    first turns non-finite norms into 1e9). Other modes: RLlib's."""
    if grad_clip_by != "global_norm" or grad_clip is None:
        return clip_gradients(gradients_dict, grad_clip=grad_clip, grad_clip_by=grad_clip_by)
    gradients = [g for g in gradients_dict.values() if g is not None]
    norm, _ = clip_by_global_norm(gradients, grad_clip=grad_clip)
    return norm


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
