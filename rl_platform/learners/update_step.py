"""One PPO minibatch step as one function over fixed shapes, with no host synchronization.

Gather by a device index -> `forward_train` -> the PPO terms (rl_platform/losses/ppo.py) ->
backward -> global-norm clip (rl_platform/learners/gradients.py) -> Adam on the optimizer's own
state, refused on the device when the gradient norm is not finite
(rl_platform/learners/device_adam.py) -> the step's metrics as one `[len(METRIC_KEYS)]` tensor,
under the result keys RLlib's PPO learner logs (`PPO_QUANTITIES`,
rl_platform/base/metric_keys.py), so both learner paths report the same keys. Nothing in it
asks the host a question (tests patch `item`, `__bool__`, `cpu`, `numpy` and `tolist` to raise
while it runs), so on CUDA the whole step can be captured as a graph and replayed per
minibatch; on the CPU it runs as it is.

The clip is RLlib's `grad_clip_by: global_norm`, the one `fused_clip_gradients` applies on
RLlib's path (`clip_by_global_norm`); the learning rate and the entropy coefficient are device
tensors, read from RLlib's schedules when the step is made and copied in place into a captured
step's (`take_schedules`).

The step computes PPO (and BC's term) only; it never calls `compute_loss_for_module`, so a term
a learner adds there is not served here, and a spec with one learns on RLlib's path
(rl_platform/spec/learner_choice.py).
"""

from dataclasses import dataclass
from typing import Any

import torch
from ray.rllib.core.columns import Columns

from rl_platform.base.metric_keys import PPO_QUANTITIES, TOTAL_LOSS
from rl_platform.learners.device_adam import adam_step, prepare_state
from rl_platform.learners.flat_batch import FlatBatch
from rl_platform.learners.gradients import clip_by_global_norm
from rl_platform.losses.bc import BC_METRIC_NAMES, bc_terms, ppo_loss_mask
from rl_platform.losses.ppo import ppo_loss, total_loss
from rl_platform.modules.recurrent_module import RESETS

GLOBAL_NORM_KEY = "gradients_default_optimizer_global_norm"
"""RLlib's result key of the gradients' norm (ray/rllib/core/learner/learner.py)."""
NONFINITE = "nonfinite"
METRIC_KEYS = (*(quantity.result_key for quantity in PPO_QUANTITIES), GLOBAL_NORM_KEY, NONFINITE)
"""What each step returns, in order; the learner logs their means over an update."""
BC_METRIC_KEYS = (*BC_METRIC_NAMES.values(), "bc/coef")
"""What a step with BC (`bc_coef`) returns besides, before `nonfinite`."""


def metric_keys(*, bc: bool) -> tuple[str, ...]:
    """The keys of a step's metrics, in order; `nonfinite` is always the last."""
    return (*METRIC_KEYS[:-1], *BC_METRIC_KEYS, METRIC_KEYS[-1]) if bc else METRIC_KEYS


@dataclass(frozen=True)
class StepSettings:
    clip_param: float
    vf_clip_param: float
    vf_loss_coeff: float
    entropy_coeff: float
    kl_coeff: torch.Tensor | float | None
    """None: no KL term (`training.use_kl_loss: false`)."""
    grad_clip: float | None


class UpdateStep:
    """The minibatch step of one module with its optimizers (module docstring)."""

    def __init__(
        self,
        module: Any,
        optimizers: list[torch.optim.Optimizer],
        settings: StepSettings,
        *,
        device: torch.device | str,
        bc_coef: float | None = None,
    ) -> None:
        self.module, self.optimizers, self.settings = module, optimizers, settings
        for optimizer in optimizers:
            prepare_state(optimizer)
        self.lr = [
            torch.tensor(float(opt.param_groups[0]["lr"]), device=device) for opt in optimizers
        ]
        self.entropy_coeff = torch.tensor(settings.entropy_coeff, device=device)
        # BC's weight moves with the env steps, so it is a tensor as the learning rate is.
        self.bc_coef = None if bc_coef is None else torch.tensor(float(bc_coef), device=device)
        self.metric_keys = metric_keys(bc=bc_coef is not None)
        self.params = [p for opt in optimizers for g in opt.param_groups for p in g["params"]]

    def take_schedules(self, other: "UpdateStep") -> None:
        """`other`'s learning rates and entropy coefficient into this step's tensors, in
        place (a captured step reads them where they are)."""
        for mine, new in zip(self.lr, other.lr, strict=True):
            mine.copy_(new)
        self.entropy_coeff.copy_(other.entropy_coeff)
        if self.bc_coef is not None:
            self.bc_coef.copy_(other.bc_coef)

    def __call__(self, batch: FlatBatch, index: torch.Tensor) -> torch.Tensor:
        minibatch = batch.rows(index)
        terms = self.loss_terms(minibatch)
        loss = total_loss(terms)
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=False)
        loss.backward()
        norm, ok = clip_by_global_norm(
            [p.grad for p in self.params if p.grad is not None], grad_clip=self.settings.grad_clip
        )
        for optimizer, lr in zip(self.optimizers, self.lr, strict=True):
            adam_step(optimizer, ok=ok, lr=lr)
        values = {
            **terms,
            TOTAL_LOSS.term: loss.detach(),
            GLOBAL_NORM_KEY: norm,
            NONFINITE: 1.0 - ok,
        }
        metrics = values | {
            quantity.result_key: values[quantity.term]
            for quantity in PPO_QUANTITIES
            if quantity.term in values  # the KL only with `use_kl_loss`: 0 below
        }
        zero = torch.zeros((), device=norm.device)
        return torch.stack(
            [torch.as_tensor(metrics.get(k, zero)).detach() for k in self.metric_keys]
        )

    def loss_terms(self, minibatch: FlatBatch) -> dict[str, torch.Tensor]:
        """The PPO terms of one minibatch under the module's current parameters."""
        settings = self.settings
        batch: dict[str, Any] = {Columns.OBS: minibatch.obs}
        valid = torch.ones_like(minibatch.advantages, dtype=torch.bool)
        if minibatch.state_in is not None:  # sequences [B, L]: flattened after the forward
            batch |= {Columns.STATE_IN: minibatch.state_in, RESETS: minibatch.resets}
            valid = minibatch.valid
        weights = valid.to(minibatch.advantages.dtype)
        if minibatch.bc_mode is not None:  # teacher-led steps are BC's alone
            weights = ppo_loss_mask(bc_mode=minibatch.bc_mode, loss_mask=valid).to(weights.dtype)
        out = self.module.forward_train(batch)
        values = self.module.compute_values(batch, embeddings=out.get(Columns.EMBEDDINGS))
        logits = out[Columns.ACTION_DIST_INPUTS]
        terms = ppo_loss(
            logits=logits.reshape(-1, logits.shape[-1]),
            actions=minibatch.actions.reshape(-1),
            logp_old=minibatch.logp.reshape(-1),
            advantages=minibatch.advantages.reshape(-1),
            values=values.reshape(-1),
            value_targets=minibatch.value_targets.reshape(-1),
            weights=weights.reshape(-1),
            clip_param=settings.clip_param,
            vf_clip_param=settings.vf_clip_param,
            vf_loss_coeff=settings.vf_loss_coeff,
            entropy_coeff=self.entropy_coeff,
            old_logits=minibatch.logits.reshape(-1, logits.shape[-1])
            if settings.kl_coeff is not None
            else None,
            kl_coeff=settings.kl_coeff if settings.kl_coeff is not None else 0.0,
            behaviour_weights=None
            if minibatch.behaviour_weights is None
            else minibatch.behaviour_weights.reshape(-1),
        )
        if minibatch.bc_mode is not None and self.bc_coef is not None:
            terms |= self._bc_terms(logits, minibatch, valid=valid, ppo=total_loss(terms))
        return terms

    def _bc_terms(
        self, logits: torch.Tensor, minibatch: FlatBatch, *, valid: torch.Tensor, ppo
    ) -> dict[str, torch.Tensor]:
        """BC's cross-entropy to the teacher on the labelled steps (rl_platform/losses/bc.py)
        and its diagnostics under their metric keys; `ppo` is the PPO terms' sum."""
        terms = bc_terms(
            logits=logits,
            teacher_actions=minibatch.teacher_actions.reshape(logits.shape[:-1]),
            bc_mode=minibatch.bc_mode.reshape(logits.shape[:-1]),
            coef=self.bc_coef,
            loss_mask=valid.reshape(logits.shape[:-1]),
        )
        metrics = {BC_METRIC_NAMES[k]: v.detach() for k, v in terms.items()}
        metrics["loss/ppo"] = ppo.detach()
        return {"loss_bc": terms["loss_bc"], **metrics, "bc/coef": self.bc_coef}
