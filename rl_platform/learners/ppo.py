"""PPO learner: RLlib's PPO loss plus `clip_frac`/`approx_kl` diagnostics and the finite guard."""

from typing import Any

from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.learners.chunk_states import IndexedChunkStates
from rl_platform.learners.finite_guard import FiniteUpdateGuard
from rl_platform.losses.ppo_diagnostics import ppo_diagnostics


class PlatformPPOLearner(FiniteUpdateGuard, IndexedChunkStates, PPOTorchLearner):
    """`PPOTorchLearner` + diagnostics; the loss itself is RLlib's, unchanged."""

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
        return total_loss
