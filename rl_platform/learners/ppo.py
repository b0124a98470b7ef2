"""PPO learner: RLlib's PPO loss plus `clip_frac`/`approx_kl` diagnostics and the finite guard.

A module that returns "opponent_prediction" from `forward_train` (transformer_lstm with
`opponent_prediction` > 0) adds that weight x `opponent_prediction_loss`, logged as
`loss/opponent_prediction` (the unweighted error).
"""

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.connectors.history_window import HISTORY_KEY, MASK_KEY
from rl_platform.learners.chunk_states import IndexedChunkStates
from rl_platform.learners.finite_guard import FiniteUpdateGuard
from rl_platform.losses.opponent_prediction import OPPONENT_PREDICTION, opponent_prediction_loss
from rl_platform.losses.ppo_diagnostics import ppo_diagnostics


class PlatformPPOLearner(FiniteUpdateGuard, IndexedChunkStates, PPOTorchLearner):
    """`PPOTorchLearner` + diagnostics (+ the modules' auxiliary loss); the PPO loss itself is
    RLlib's, unchanged."""

    @override(PPOTorchLearner)
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out) -> Any:
        total_loss = super().compute_loss_for_module(
            module_id=module_id, config=config, batch=batch, fwd_out=fwd_out
        )
        module = self.module[module_id].unwrapped()
        dist = module.get_train_action_dist_cls().from_logits(fwd_out[Columns.ACTION_DIST_INPUTS])
        diagnostics = ppo_diagnostics(
            logp_new=dist.logp(batch[Columns.ACTIONS]),
            logp_old=batch[Columns.ACTION_LOGP],
            clip_param=config.clip_param,
            mask=batch.get(Columns.LOSS_MASK),
        )
        self.metrics.log_dict(diagnostics, key=module_id, window=1)
        if OPPONENT_PREDICTION in fwd_out:
            total_loss = total_loss + self._opponent_prediction(module_id, module, batch, fwd_out)
        return total_loss

    def _opponent_prediction(
        self, module_id: str, module: Any, batch: dict[str, Any], fwd_out: dict[str, Any]
    ) -> torch.Tensor:
        """The weighted auxiliary loss; logs the unweighted one."""
        observations = batch[Columns.OBS]
        loss = opponent_prediction_loss(
            prediction=fwd_out[OPPONENT_PREDICTION],
            frames=observations[HISTORY_KEY][:, :, -1],
            frame_valid=observations[MASK_KEY][:, :, -1],
            loss_mask=batch.get(Columns.LOSS_MASK),
        )
        self.metrics.log_value(
            (module_id, "loss/opponent_prediction"), loss.detach(), reduce="mean"
        )
        return module.parsed_config.opponent_prediction * loss
