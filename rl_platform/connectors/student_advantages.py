"""Learner piece after RLlib's GAE: advantages standardized over the student's steps only.

RLlib's `GeneralAdvantageEstimation` (ray/rllib/connectors/learner/
general_advantage_estimation.py) standardizes advantages over the whole train batch, so the
teacher-led steps would shift the mean and scale of the student's advantages. This piece
re-standardizes each module's advantages over its PPO steps (`ppo_loss_mask`: valid and not
teacher-led) and zeroes the teacher-led ones. `BCPPOLearner.build` appends it.
"""

from typing import Any

import torch
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.imitation.slicing import BC_MODE
from rl_platform.losses.bc import ppo_loss_mask, standardize_advantages


class StudentAdvantages(ConnectorV2):
    """See the module docstring."""

    @override(ConnectorV2)
    def __call__(self, *, rl_module: Any, batch: dict[str, Any], **kwargs: Any) -> Any:
        for module_batch in batch.values():
            if not isinstance(module_batch, dict):
                continue
            if BC_MODE not in module_batch or Columns.ADVANTAGES not in module_batch:
                continue
            advantages = torch.as_tensor(module_batch[Columns.ADVANTAGES])
            bc_mode = torch.as_tensor(module_batch[BC_MODE], device=advantages.device)
            loss_mask = module_batch.get(Columns.LOSS_MASK)
            if loss_mask is not None:
                loss_mask = torch.as_tensor(loss_mask, device=advantages.device)
            mask = ppo_loss_mask(bc_mode=bc_mode, loss_mask=loss_mask)
            module_batch[Columns.ADVANTAGES] = standardize_advantages(advantages, mask=mask)
        return batch
