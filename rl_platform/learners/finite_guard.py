"""Refuse optimizer steps on NaN/Inf gradients instead of RLlib's nan_to_num-and-step.

RLlib's `TorchLearner.apply_gradients` zeroes non-finite gradients and steps anyway, which can
corrupt Adam's moments silently. Here the whole update is skipped and `health/nonfinite_update`
is logged so the driver stops the run with a clear message while the weights stay finite.
"""

from typing import Any

from ray.rllib.core import ALL_MODULES
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.utils.annotations import override

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.losses.ppo_diagnostics import all_finite


class FiniteUpdateGuard(TorchLearner):
    """Mixin for any TorchLearner: skip the step when any gradient is non-finite."""

    @override(TorchLearner)
    def apply_gradients(self, gradients_dict: dict[Any, Any]) -> None:
        finite = all_finite(gradients_dict)
        self.metrics.log_value(
            (ALL_MODULES, HEALTH_NONFINITE_KEY), 0.0 if finite else 1.0, reduce="max", window=1
        )
        if not finite:
            return
        super().apply_gradients(gradients_dict)
