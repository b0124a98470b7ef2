"""The PPO objective for categorical policies, as named terms (pure torch, no host reads).

Schulman et al. 2017, "Proximal Policy Optimization Algorithms", eq. 7 (clipped surrogate) and
eq. 9 (with a value loss and an entropy bonus), in the form RLlib's `PPOTorchLearner` computes
it (ray/rllib/algorithms/ppo/torch/ppo_torch_learner.py): the squared value error is clipped
at `vf_clip_param` (not the value itself), and the KL term to the acting policy is optional.
Means are weighted by `weights` (1 for a step the loss reads, 0 for padding or another
module's step), so every tensor keeps its shape: what a captured CUDA graph needs in place of
RLlib's boolean indexing.

Decoupled PPO (Hilton et al. 2021, "Batch size-invariance for policy optimization", section
3): when the steps were played by an older policy than the learner's at the update's start
(`resources.overlap`: one version of lag), the ratio is taken against that proximal policy
(`logp_old` = its log-probabilities) and each step's surrogate is weighted by
pi_prox / pi_behaviour, so the clip bounds the step from where the learner is, not from where
the data came from. With weights of 1 it is PPO.

Keys starting with `loss_` are the terms as summed into the total (`total_loss`); the rest are
diagnostics. Each quantity is emitted once, under its `term` in
rl_platform/base/metric_keys.py's `PPO_QUANTITIES`, which also names it in a learner's results
(RLlib's name, on both learner paths) and in the run's metrics.
"""

import torch

from rl_platform.base.metric_keys import (
    ENTROPY,
    KL_LOSS,
    POLICY_LOSS,
    VALUE_LOSS,
    VALUE_LOSS_UNCLIPPED,
    VF_EXPLAINED_VAR,
)
from rl_platform.losses.ppo_diagnostics import masked_mean, ppo_diagnostics


def categorical_terms(logits: torch.Tensor, actions: torch.Tensor):
    """(log-probabilities of `actions`, entropies, log-softmax) of categorical `logits` [B, A]."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    logp = log_probs.gather(-1, actions[:, None].long())[:, 0]
    # As torch.distributions.Categorical.entropy: masked actions (logit = dtype min) give 0.
    safe = log_probs.clamp_min(torch.finfo(log_probs.dtype).min)
    entropy = -(safe * log_probs.exp()).sum(-1)
    return logp, entropy, log_probs


def explained_variance(targets: torch.Tensor, predictions: torch.Tensor) -> torch.Tensor:
    """1 - Var[targets - predictions] / Var[targets], floored at -1, as RLlib's
    `explained_variance` (ray/rllib/utils/torch_utils.py), over every step as RLlib takes it."""
    ratio = torch.var(targets - predictions) / torch.var(targets)
    return torch.clamp(1.0 - ratio, min=-1.0)


def ppo_loss(
    *,
    logits: torch.Tensor,
    actions: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    values: torch.Tensor,
    value_targets: torch.Tensor,
    weights: torch.Tensor,
    clip_param: float,
    vf_clip_param: float,
    vf_loss_coeff: float,
    entropy_coeff: torch.Tensor | float,
    old_logits: torch.Tensor | None = None,
    kl_coeff: torch.Tensor | float = 0.0,
    behaviour_weights: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """Named terms of one minibatch; `old_logits` (the policy `logp_old` came from) adds the
    KL term. `behaviour_weights` (decoupled PPO, below) scale each step's surrogate."""
    weights = weights.to(values.dtype)
    logp, entropy, log_probs = categorical_terms(logits, actions)
    ratio = torch.exp(logp - logp_old)
    surrogate = torch.min(
        advantages * ratio, advantages * torch.clamp(ratio, 1 - clip_param, 1 + clip_param)
    )
    if behaviour_weights is not None:
        surrogate = behaviour_weights * surrogate
    value_error = (values - value_targets) ** 2
    value_loss = masked_mean(value_error.clamp(0.0, vf_clip_param), weights)
    mean_entropy = masked_mean(entropy, weights)
    terms = {
        POLICY_LOSS.term: -masked_mean(surrogate, weights),
        "loss_value": vf_loss_coeff * value_loss,
        "loss_entropy": -entropy_coeff * mean_entropy,
    }
    with torch.no_grad():
        diagnostics = {
            VALUE_LOSS.term: value_loss.detach(),
            VALUE_LOSS_UNCLIPPED.term: masked_mean(value_error, weights).detach(),
            ENTROPY.term: mean_entropy.detach(),
            VF_EXPLAINED_VAR.term: explained_variance(value_targets, values.detach()),
            **ppo_diagnostics(
                logp_new=logp, logp_old=logp_old, clip_param=clip_param, mask=weights
            ),
        }
    if old_logits is not None:
        old_log_probs = torch.log_softmax(old_logits.float(), dim=-1)
        kl = (old_log_probs.exp() * (old_log_probs - log_probs)).sum(-1)
        mean_kl = masked_mean(kl, weights)
        terms["loss_kl"] = kl_coeff * mean_kl
        diagnostics[KL_LOSS.term] = mean_kl.detach()
    return terms | diagnostics


def total_loss(terms: dict[str, torch.Tensor]) -> torch.Tensor:
    """The sum of the `loss_*` terms."""
    losses = [value for key, value in terms.items() if key.startswith("loss_")]
    if len(losses) == 1 and losses[0].dim() == 0:
        # A lone scalar is its own sum, exactly: no stack and sum for backward to run
        # through (DQN's one term; each op is most of its cost on tiny nets, issue #57).
        return losses[0]
    return torch.stack(losses).sum()
