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

Keys starting with `loss_` are summed into the total (`total_loss`); the rest are
diagnostics under RLlib's own names (`policy_loss`, `vf_loss`, `entropy`, `mean_kl_loss`, ...),
so `rlp train`'s metric names do not change with the learner.
"""

import torch


def _mean(values: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    return (values * weights).sum() / weights.sum().clamp_min(1.0)


def categorical_terms(logits: torch.Tensor, actions: torch.Tensor):
    """(log-probabilities of `actions`, entropies, log-softmax) of categorical `logits` [B, A]."""
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    logp = log_probs.gather(-1, actions[:, None].long())[:, 0]
    # As torch.distributions.Categorical.entropy: masked actions (logit = dtype min) give 0.
    safe = log_probs.clamp_min(torch.finfo(log_probs.dtype).min)
    entropy = -(safe * log_probs.exp()).sum(-1)
    return logp, entropy, log_probs


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
    value_error_clipped = value_error.clamp(0.0, vf_clip_param)
    terms = {
        "loss_policy": -_mean(surrogate, weights),
        "loss_value": vf_loss_coeff * _mean(value_error_clipped, weights),
        "loss_entropy": -entropy_coeff * _mean(entropy, weights),
    }
    with torch.no_grad():
        log_ratio = (logp - logp_old).detach()
        diagnostics = {
            "policy_loss": terms["loss_policy"].detach(),
            "vf_loss": _mean(value_error_clipped, weights).detach(),
            "vf_loss_unclipped": _mean(value_error, weights).detach(),
            "entropy": _mean(entropy, weights).detach(),
            # CleanRL's diagnostics (rl_platform/losses/ppo_diagnostics.py).
            "clip_frac": _mean(((log_ratio.exp() - 1.0).abs() > clip_param).float(), weights),
            "approx_kl": _mean((log_ratio.exp() - 1.0) - log_ratio, weights),
        }
    if old_logits is not None:
        old_log_probs = torch.log_softmax(old_logits.float(), dim=-1)
        kl = (old_log_probs.exp() * (old_log_probs - log_probs)).sum(-1)
        mean_kl = _mean(kl, weights)
        terms["loss_kl"] = kl_coeff * mean_kl
        diagnostics["mean_kl_loss"] = mean_kl.detach()
    return terms | diagnostics


def total_loss(terms: dict[str, torch.Tensor]) -> torch.Tensor:
    """The sum of the `loss_*` terms."""
    return torch.stack([value for key, value in terms.items() if key.startswith("loss_")]).sum()
