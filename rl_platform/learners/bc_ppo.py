"""BC + PPO learner: RLlib's PPO loss on the student's steps + coef x cross-entropy to a teacher.

The batch carries `bc_mode` and `teacher_action` per step (written on the env runners by
`rl_platform.bc.teacher_actions`). The PPO term is `PlatformPPOLearner`'s, unchanged,
computed on a batch whose loss mask also drops teacher-led steps (`ppo_loss_mask`); the BC
term and its diagnostics come from `rl_platform.losses.bc.bc_terms`. Advantages are
re-standardized over the student's steps by the `StudentAdvantages` learner piece appended
after RLlib's GAE.

Settings (`coef`, phase) are `settings_at(bc_spec, env_steps)`: the spec arrives in
`learner_config_dict["rlp_bc"]`, and the driver callback pushes new settings with
`set_bc_settings` as env steps accumulate. Logged per module, averaged over the iteration's
minibatches: `loss/bc`, `loss/ppo`, `bc/accuracy`, `bc/cross_entropy`, `bc/teacher_led_frac`,
`bc/student_led_frac`, `bc/labelled_steps` (per minibatch), `bc/coef`.

With `bc.replay`, a `LabelRecorder` at the end of the learner pipeline aggregates each batch's
labelled rows into a `LabelReplay` per module, and every PPO minibatch step is followed by
`updates_per_minibatch` BC-only steps on replayed rows (while coef > 0), logged as
`loss/bc_replay`, `bc/replay_accuracy` and `bc/replay_steps` (labelled steps held). The buffer
is learner memory, not checkpointed: a resumed run refills it from its next batches.
"""

from typing import Any

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.base.seed_tree import SeedTree
from rl_platform.connectors.label_recorder import LabelRecorder
from rl_platform.connectors.student_advantages import StudentAdvantages
from rl_platform.imitation.label_replay import LabelReplay, as_bc_only_batch
from rl_platform.imitation.schedule import BCSettings, settings_at
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION
from rl_platform.learners.ppo import PlatformPPOLearner
from rl_platform.losses.bc import BC_METRIC_NAMES, bc_terms, ppo_loss_mask, total_loss
from rl_platform.spec.bc import BCSpec

LEARNER_CONFIG_KEY = "rlp_bc"


class BCPPOLearner(PlatformPPOLearner):
    """`PlatformPPOLearner` + the BC term (module docstring)."""

    @override(PlatformPPOLearner)
    def build(self) -> None:
        super().build()
        spec = BCSpec.model_validate(self.config.learner_config_dict[LEARNER_CONFIG_KEY])
        self.bc_settings: BCSettings = settings_at(spec, 0)
        self._replay_spec = spec.replay
        self._replays: dict[str, LabelReplay] = {}
        self._replaying = False
        if self._learner_connector is not None:
            self._learner_connector.append(StudentAdvantages())
            if spec.replay is not None:
                self._learner_connector.append(LabelRecorder(self._record_labels))

    def set_bc_settings(self, settings: BCSettings) -> None:
        if settings.phase != self.bc_settings.phase:  # the labels came from another teacher
            for replay in self._replays.values():
                replay.clear()
        self.bc_settings = settings

    def _record_labels(self, module_id: str, columns: dict, labelled: torch.Tensor) -> None:
        if self.bc_settings.coef <= 0:  # no replay step would use them
            return
        seed = SeedTree(self.config.seed).learner(self._learner_index)
        replay = self._replays.setdefault(
            module_id, LabelReplay(self._replay_spec.capacity, seed=seed)
        )
        replay.add(columns, labelled=labelled)

    @override(PlatformPPOLearner)
    def _update(self, batch: dict[str, Any]) -> Any:
        result = super()._update(batch)
        if self._replay_spec is not None:
            self._replay_updates(train=self.bc_settings.coef > 0)
        return result

    def _replay_updates(self, *, train: bool) -> None:
        """`updates_per_minibatch` BC-only gradient steps on rows drawn from the replays; with
        `train` False (coef 0) one no-grad pass that only logs, so that the replay metrics stay
        defined (RLlib would report a key logged in earlier iterations as NaN, which the
        driver's health check reads as a NaN loss)."""
        ready = {mid: replay for mid, replay in self._replays.items() if len(replay)}
        if not ready:
            return
        steps = self._replay_spec.minibatch_size or self.config.minibatch_size or 128

        def replay_batch() -> dict[str, Any]:
            return {
                mid: as_bc_only_batch(replay.sample(max(1, steps // replay.steps_per_row)))
                for mid, replay in ready.items()
            }

        self._replaying = True
        try:
            if train:
                for _ in range(self._replay_spec.updates_per_minibatch):
                    super()._update(replay_batch())
            else:
                with torch.no_grad():
                    batch = replay_batch()
                    self.compute_losses(fwd_out=self.module.forward_train(batch), batch=batch)
        finally:
            self._replaying = False
        for mid, replay in ready.items():
            self.metrics.log_value((mid, "bc/replay_steps"), replay.labelled_steps, window=1)

    @override(PlatformPPOLearner)
    def compute_loss_for_module(self, *, module_id, config, batch, fwd_out) -> Any:
        if BC_MODE not in batch:  # modules that are not cloned (e.g. league exploiters)
            return super().compute_loss_for_module(
                module_id=module_id, config=config, batch=batch, fwd_out=fwd_out
            )
        if self._replaying:
            return self._replay_loss(module_id, batch=batch, fwd_out=fwd_out)
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
        metrics = {BC_METRIC_NAMES[k]: v.detach() for k, v in terms.items() if k in BC_METRIC_NAMES}
        metrics["bc/coef"] = torch.tensor(float(self.bc_settings.coef))
        # Mean over the iteration's minibatches (RLlib 2.60 clears series stats on reduce).
        self.metrics.log_dict(metrics, key=module_id, reduce="mean")
        return total_loss(terms)

    def _replay_loss(self, module_id: str, *, batch: dict, fwd_out: dict) -> torch.Tensor:
        """The BC term alone, on a replayed batch (`as_bc_only_batch`)."""
        terms = bc_terms(
            logits=fwd_out[Columns.ACTION_DIST_INPUTS],
            teacher_actions=batch[TEACHER_ACTION],
            bc_mode=batch[BC_MODE],
            coef=self.bc_settings.coef,
            loss_mask=batch[Columns.LOSS_MASK],
        )
        metrics = {"loss/bc_replay": terms["loss_bc"], "bc/replay_accuracy": terms["bc_accuracy"]}
        self.metrics.log_dict(
            {key: value.detach() for key, value in metrics.items()}, key=module_id, reduce="mean"
        )
        return terms["loss_bc"]
