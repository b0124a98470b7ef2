"""The BC + PPO hybrid objective, as pure torch functions (no Ray).

    L = L_PPO(student-acted steps) + coef * CE(pi_student(. | s), a_teacher)(labelled steps)

in the spirit of kickstarting (Schmitt et al. 2018, https://arxiv.org/abs/1803.03835: an
auxiliary distillation term with a decaying weight added to the RL loss), with hard teacher
actions as labels. `bc_mode` (see `rl_platform.imitation.slicing`) says who acted at each step:

* teacher-led steps were chosen by the teacher, so their probability ratios and advantages
  belong to another policy: `ppo_loss_mask` drops them from the PPO term (and
  `standardize_advantages` from the advantage statistics);
* teacher- and student-led steps carry a label and enter the cross-entropy.

Every function takes the same leading shape for all per-step tensors ([B] or [B, T] for
recurrent modules) and an optional `loss_mask` (False: padding / RLlib's bootstrap step).
"""

import torch
from torch.nn import functional as F

from rl_platform.imitation.slicing import BCMode
from rl_platform.losses.ppo_diagnostics import masked_mean

LOSS_PREFIX = "loss_"
BC_METRIC_NAMES = {
    "loss_bc": "loss/bc",
    "loss_ppo": "loss/ppo",
    "bc_accuracy": "bc/accuracy",
    "bc_cross_entropy": "bc/cross_entropy",
    "bc_teacher_led_frac": "bc/teacher_led_frac",
    "bc_student_led_frac": "bc/student_led_frac",
    "bc_labelled_steps": "bc/labelled_steps",
}
"""Each term's metric key (per module, the mean over an update's minibatches), and `bc/coef`."""


def _valid(bc_mode: torch.Tensor, loss_mask: torch.Tensor | None) -> torch.Tensor:
    return torch.ones_like(bc_mode, dtype=torch.bool) if loss_mask is None else loss_mask.bool()


def ppo_loss_mask(*, bc_mode: torch.Tensor, loss_mask: torch.Tensor | None) -> torch.Tensor:
    """Steps that enter the PPO term: valid and acted by the student."""
    return _valid(bc_mode, loss_mask) & (bc_mode != BCMode.TEACHER_LED)


def labelled_mask(*, bc_mode: torch.Tensor, loss_mask: torch.Tensor | None) -> torch.Tensor:
    """Steps that enter the BC term: valid and teacher- or student-led."""
    labelled = (bc_mode == BCMode.TEACHER_LED) | (bc_mode == BCMode.STUDENT_LED)
    return _valid(bc_mode, loss_mask) & labelled


def standardize_advantages(advantages: torch.Tensor, *, mask: torch.Tensor) -> torch.Tensor:
    """(A - mean) / std over `mask` (RLlib's GAE normalization, ray/rllib/connectors/learner/
    general_advantage_estimation.py, restricted to PPO's steps); 0 outside `mask`.

    Standardization is affine-invariant, so re-standardizing RLlib's already standardized
    advantages over the mask equals standardizing the raw advantages over the mask.
    """
    mask = mask.bool()
    if not bool(mask.any()):
        return torch.zeros_like(advantages)
    selected = advantages[mask]
    std = selected.std(unbiased=False) if selected.numel() > 1 else selected.new_tensor(1.0)
    standardized = (advantages - selected.mean()) / std.clamp_min(1e-4)
    return torch.where(mask, standardized, torch.zeros_like(advantages))


def bc_terms(
    *,
    logits: torch.Tensor,
    teacher_actions: torch.Tensor,
    bc_mode: torch.Tensor,
    coef: float | torch.Tensor,
    loss_mask: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """`loss_bc` = coef * mean cross-entropy to the teacher over labelled steps, + diagnostics.

    logits: [..., A] student action logits; teacher_actions, bc_mode: [...] integer.
    With no labelled step the loss is 0 (not NaN) and still part of the graph.
    """
    labelled = labelled_mask(bc_mode=bc_mode, loss_mask=loss_mask)
    labels = teacher_actions.long().clamp(0, logits.shape[-1] - 1)
    log_probs = F.log_softmax(logits, dim=-1)
    nll = -log_probs.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    cross_entropy = masked_mean(nll, labelled)
    valid = _valid(bc_mode, loss_mask)
    with torch.no_grad():
        correct = (logits.argmax(dim=-1) == labels).to(logits.dtype)
        diagnostics = {
            "bc_cross_entropy": cross_entropy.detach(),
            "bc_accuracy": masked_mean(correct, labelled),
            "bc_teacher_led_frac": masked_mean((bc_mode == BCMode.TEACHER_LED).float(), valid),
            "bc_student_led_frac": masked_mean((bc_mode == BCMode.STUDENT_LED).float(), valid),
            "bc_labelled_steps": labelled.sum().to(logits.dtype),
        }
    return {"loss_bc": coef * cross_entropy, **diagnostics}


def total_loss(terms: dict[str, torch.Tensor]) -> torch.Tensor:
    """The sum of the terms whose names start with `loss_`."""
    losses = [value for key, value in terms.items() if key.startswith(LOSS_PREFIX)]
    if not losses:
        raise ValueError(f"no {LOSS_PREFIX}* term in {sorted(terms)}")
    return torch.stack([loss.reshape(()) for loss in losses]).sum()
