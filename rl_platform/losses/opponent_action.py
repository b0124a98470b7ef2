"""Auxiliary loss: infer the action the opponent takes at this step (policy inference).

The scripted duel styles are, frame by frame, functions of what they see; what tells them
apart is which function. A head that predicts the opponent's action from the current frame
and the opponent's history can only do well by telling the styles apart, and, against
`counter`, by telling which attack it fails to answer. So it trains the history path to read
the opponent with a dense, supervised signal of its own: the auxiliary policy-inference task
of DPIQN (Hong et al., 2018, "A Deep Policy Inference Q-Network for Multi-Agent Systems").

Labels come from the array runner (rl_platform/sampling/rollout.py,
`record_opponent_actions`): the action the other seat chose at the same step, or
`NO_OPPONENT_ACTION` where it did not act (turn-based games, padding).
"""

import torch
import torch.nn.functional as F

from rl_platform.losses.ppo_diagnostics import masked_mean

OPPONENT_ACTIONS = "opponent_actions"
"""The batch column of labels [B, T] (int64)."""
OPPONENT_ACTION_LOGITS = "opponent_action_logits"
"""The `forward_train` output that holds the head's logits [B, T, A]."""
NO_OPPONENT_ACTION = -1
"""The label where the opponent did not act at this step."""


def opponent_action_loss(
    *,
    logits: torch.Tensor,
    actions: torch.Tensor,
    loss_mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Cross-entropy of `logits` [B, T, A] against `actions` [B, T] and the accuracy of the
    argmax, both over steps that are real (loss mask) and labelled. Returns 0 (with a
    gradient path) when no step is."""
    labelled = actions >= 0
    if loss_mask is not None:
        labelled = labelled & loss_mask.bool()
    targets = actions.long().clamp_min(0)
    cross_entropy = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="none")
    loss = masked_mean(cross_entropy.view_as(targets), labelled)
    with torch.no_grad():
        hits = (logits.argmax(dim=-1) == targets).float()
        accuracy = masked_mean(hits, labelled)
    return loss, accuracy
