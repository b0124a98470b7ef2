"""Learner of `algo: BC`: RLlib's MARWIL learner (BC is MARWIL with beta = 0, see
ray/rllib/algorithms/bc/bc.py) + the finite guard + `bc/accuracy`."""

from typing import Any

import torch
from ray.rllib.algorithms.marwil.torch.marwil_torch_learner import MARWILTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.learners.finite_guard import FiniteUpdateGuard


class GuardedBCLearner(FiniteUpdateGuard, MARWILTorchLearner):
    """RLlib's BC loss, unchanged; logs how often the argmax matches the recorded action."""

    @override(MARWILTorchLearner)
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out) -> Any:
        loss = super().compute_loss_for_module(
            module_id=module_id, config=config, batch=batch, fwd_out=fwd_out
        )
        with torch.no_grad():
            logits = fwd_out[Columns.ACTION_DIST_INPUTS]
            accuracy = (logits.argmax(-1) == batch[Columns.ACTIONS].long()).float().mean()
        self.metrics.log_value((module_id, "bc/accuracy"), accuracy, window=1)
        return loss
