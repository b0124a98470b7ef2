"""Auxiliary loss: predict the opponent's next frame from what the network carries now.

The transformer_lstm's history path learns only from the PPO loss, and early in training the
history adds noise before it adds information: on the duel it stayed unused (docs/modules.md,
"Does reading the opponent pay?"). A head on the per-step embeddings that predicts the
opponent's frame at t + 1 gives that path a dense signal of its own, in the spirit of the
auxiliary tasks of UNREAL (Jaderberg et al., 2016) and of opponent modelling in DRON (He et al.,
2016): what the opponent does next is what its style is.

Targets come from the same chunk (RLlib's chunks never span two episodes): the prediction at
step t is scored against the newest history frame at step t + 1, where both steps are real
(loss mask) and the frame is not padding (history mask).
"""

import torch

from rl_platform.losses.ppo_diagnostics import masked_mean

OPPONENT_PREDICTION = "opponent_prediction"
"""The `forward_train` output that holds the predictions [B, T, D]."""


def opponent_prediction_loss(
    *,
    prediction: torch.Tensor,
    frames: torch.Tensor,
    frame_valid: torch.Tensor,
    loss_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean squared error of prediction[:, t] against frames[:, t + 1] over valid pairs.

    prediction, frames: [B, T, D]; frame_valid: [B, T] (1.0 where the frame is real);
    loss_mask: [B, T] or None (all steps real). Returns 0 (with a gradient path) when no pair
    is valid, e.g. a chunk of one step.
    """
    valid = frame_valid[:, 1:] > 0.5
    if loss_mask is not None:
        valid = valid & loss_mask[:, 1:].bool() & loss_mask[:, :-1].bool()
    error = (prediction[:, :-1] - frames[:, 1:].detach()).square().mean(dim=-1)
    return masked_mean(error, valid)
