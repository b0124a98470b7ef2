"""BC + PPO learner: RLlib's PPO loss on the student's steps + coef x cross-entropy to a teacher.

The batch carries `bc_mode` and `teacher_action` per step (written on the env runners by
`rl_platform.bc.teacher_actions`). The PPO term is `PlatformPPOLearner`'s, unchanged, computed
on a batch whose loss mask also drops teacher-led steps (`ppo_loss_mask`); the BC term and its
diagnostics come from `rl_platform.losses.bc.bc_terms`. Advantages are re-standardized over the
student's steps by the `StudentAdvantages` learner piece appended after RLlib's GAE.

Settings (`coef`, phase) are `settings_at(bc_spec, env_steps)`: the spec arrives in
`learner_config_dict["rlp_bc"]`, and the driver callback pushes new settings with
`set_bc_settings` as env steps accumulate. Logged per module, averaged over the iteration's
minibatches: `loss/bc`, `loss/ppo`, `bc/accuracy`, `bc/cross_entropy`, `bc/teacher_led_frac`,
`bc/student_led_frac`, `bc/labelled_steps` (per minibatch), `bc/coef`.
"""

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.bc.schedule import BCSettings, settings_at
from rl_platform.bc.slicing import BC_MODE, TEACHER_ACTION
from rl_platform.bc.spec import BCSpec
from rl_platform.bc.student_advantages import StudentAdvantages
from rl_platform.learners.ppo import PlatformPPOLearner
from rl_platform.losses.bc import bc_terms, ppo_loss_mask, total_loss

LEARNER_CONFIG_KEY = "rlp_bc"
_METRIC_NAMES = {
    "loss_bc": "loss/bc",
    "loss_ppo": "loss/ppo",
    "bc_accuracy": "bc/accuracy",
    "bc_cross_entropy": "bc/cross_entropy",
    "bc_teacher_led_frac": "bc/teacher_led_frac",
    "bc_student_led_frac": "bc/student_led_frac",
    "bc_labelled_steps": "bc/labelled_steps",
}


class BCPPOLearner(PlatformPPOLearner):
    """`PlatformPPOLearner` + the BC term (module docstring)."""

    @override(PlatformPPOLearner)
    def build(self) -> None:
        super().build()
        spec = BCSpec.model_validate(self.config.learner_config_dict[LEARNER_CONFIG_KEY])
        self.bc_settings: BCSettings = settings_at(spec, 0)
        if self._learner_connector is not None:
            self._learner_connector.append(StudentAdvantages())

    def set_bc_settings(self, settings: BCSettings) -> None:
        self.bc_settings = settings

    @override(PlatformPPOLearner)
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out) -> Any:
        if BC_MODE not in batch:  # modules that are not cloned (e.g. league exploiters)
            return super().compute_loss_for_module(
                module_id=module_id, config=config, batch=batch, fwd_out=fwd_out
            )
        loss_mask = batch.get(Columns.LOSS_MASK)
        ppo_mask = ppo_loss_mask(bc_mode=batch[BC_MODE], loss_mask=loss_mask)
        logits = fwd_out[Columns.ACTION_DIST_INPUTS]
        if bool(ppo_mask.any()):
            loss_ppo = super().compute_loss_for_module(
                module_id=module_id,
                config=config,
                batch={**batch, Columns.LOSS_MASK: ppo_mask},
                fwd_out=fwd_out,
            )
        else:  # only teacher-led steps: RLlib's masked mean would divide by zero
            loss_ppo = logits.sum() * 0.0
        terms = {"loss_ppo": loss_ppo} | bc_terms(
            logits=logits,
            teacher_actions=batch[TEACHER_ACTION],
            bc_mode=batch[BC_MODE],
            coef=self.bc_settings.coef,
            loss_mask=loss_mask,
        )
        metrics = {_METRIC_NAMES[k]: v.detach() for k, v in terms.items() if k in _METRIC_NAMES}
        metrics["bc/coef"] = torch.tensor(float(self.bc_settings.coef))
        # Mean over the iteration's minibatches (RLlib 2.60 clears series stats on reduce).
        self.metrics.log_dict(metrics, key=module_id, reduce="mean")
        return total_loss(terms)
