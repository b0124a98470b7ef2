"""PPO learner: RLlib's PPO loss plus `clip_frac`/`approx_kl` diagnostics and the finite guard.

A module that returns "opponent_prediction" from `forward_train` (transformer_lstm with
`opponent_prediction` > 0) adds that weight x `opponent_prediction_loss`, logged as
`loss/opponent_prediction` (the unweighted error); one that returns "opponent_action_logits"
(`opponent_action` > 0) adds that weight x `opponent_action_loss` against the runner's
"opponent_actions" column, logged as `loss/opponent_action` and
`train/opponent_action_accuracy`. Both terms exist on this path only: their model type
declares them (`ModelTypeSpec.loss_terms`), so a spec with one never gets the array learner,
whose step computes PPO and BC alone (rl_platform/spec/learner_choice.py).

`clip_frac` and `approx_kl` come from the function `ppo_loss` also uses
(rl_platform/losses/ppo_diagnostics.py), under the result keys of `PPO_QUANTITIES`
(rl_platform/base/metric_keys.py) that the array learner logs too.
"""

from typing import Any

import torch
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.base.observation_keys import HISTORY_KEY, MASK_KEY
from rl_platform.learners.connector_state import LearnerConnectorState
from rl_platform.learners.finite_guard import FiniteUpdateGuard
from rl_platform.learners.indexed_chunk_states import IndexedChunkStates
from rl_platform.losses.opponent_action import (
    OPPONENT_ACTION_LOGITS,
    OPPONENT_ACTIONS,
    opponent_action_loss,
)
from rl_platform.losses.opponent_prediction import OPPONENT_PREDICTION, opponent_prediction_loss
from rl_platform.losses.ppo_diagnostics import ppo_diagnostics


class PlatformPPOLearner(
    LearnerConnectorState, FiniteUpdateGuard, IndexedChunkStates, PPOTorchLearner
):
    """`PPOTorchLearner` + diagnostics (+ the modules' auxiliary loss); the PPO loss itself is
    RLlib's, unchanged. Its learner connector's state is checkpointed (reward scaling)."""

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
        if OPPONENT_ACTION_LOGITS in fwd_out:
            total_loss = total_loss + self._opponent_action(module_id, module, batch, fwd_out)
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

    def _opponent_action(
        self, module_id: str, module: Any, batch: dict[str, Any], fwd_out: dict[str, Any]
    ) -> torch.Tensor:
        """The weighted policy-inference loss; logs the unweighted one and its accuracy."""
        if OPPONENT_ACTIONS not in batch:
            raise ValueError(
                f"module {module_id!r} has model.opponent_action > 0 but its batch has no "
                f"{OPPONENT_ACTIONS!r} column: only the array runner (env.runner: vector) "
                "records the opponent's actions"
            )
        loss, accuracy = opponent_action_loss(
            logits=fwd_out[OPPONENT_ACTION_LOGITS],
            actions=batch[OPPONENT_ACTIONS],
            loss_mask=batch.get(Columns.LOSS_MASK),
        )
        self.metrics.log_value((module_id, "loss/opponent_action"), loss.detach(), reduce="mean")
        self.metrics.log_value(
            (module_id, "train/opponent_action_accuracy"), accuracy, reduce="mean"
        )
        return module.parsed_config.opponent_action * loss
