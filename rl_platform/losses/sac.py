"""The SAC objective for continuous actions as named terms (pure torch, no host reads).

Haarnoja et al. 2018, "Soft Actor-Critic Algorithms and Applications" (arXiv:1812.05905):
twin soft Q-functions regressed on a target that takes the smaller of the two target
critics (section 5, clipped double Q), a tanh-squashed Gaussian policy trained through the
reparameterized action (eq. 7-8, 11), and a learned temperature with target entropy
-action_dim (eq. 18). In the form RLlib's `SACTorchLearner` computes it
(ray/rllib/algorithms/sac/torch/sac_torch_learner.py, `_compute_loss_for_module_continuous`),
term for term, so that both give the same numbers on the same forward outputs:

- critics: the paper's squared error, or Huber (delta 1) as RLlib computes it
  (`critic_loss`), weighted by the replay's importance weights: mean(w * loss(Q_i(s, a), y))
  for each critic, with
  y = r + gamma^n (1 - terminated) (min_i Q'_i(s', a') - alpha * log pi(a'|s')), a' drawn
  (not reparameterized) from the current policy, everything in y detached;
- actor: mean(alpha * log pi(a~|s) - min_i Q_i(s, a~)) with a~ reparameterized; alpha is
  detached and the critics' parameters are frozen for this term (the step does that), so
  its gradient reaches the policy only;
- temperature: -mean(log_alpha * (log pi(a~|s) + target_entropy)), on log_alpha (RLlib's
  form: the gradient is in log space, alpha = exp(log_alpha));
- TD error for priorities: |Q_1 - y|, averaged with |Q_2 - y| when twin.

RLlib logs `qf_mean` as the mean of min_i Q_i(s, a~) (the actor's Q), and so does `q_mean`.
"""

import torch

from rl_platform.losses.bellman import TDLoss, bellman_target, td_loss


def sac_loss(
    *,
    q_pred: torch.Tensor,
    q_twin_pred: torch.Tensor | None,
    q_target_next: torch.Tensor,
    logp_next: torch.Tensor,
    q_policy: torch.Tensor,
    logp_policy: torch.Tensor,
    log_alpha: torch.Tensor,
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    n_steps: torch.Tensor,
    weights: torch.Tensor,
    gamma: float,
    target_entropy: float,
    critic_loss: TDLoss = "mse",
) -> dict[str, torch.Tensor]:
    """Named terms of one batch (all [B] inputs): `q_pred`/`q_twin_pred` Q_i(s, a) of the
    stored actions, `q_target_next` min_i Q'_i(s', a') and `logp_next` log pi(a'|s'),
    `q_policy` min_i Q_i(s, a~) and `logp_policy` log pi(a~|s) of the reparameterized
    action. `td_error` is [B]; every other diagnostic is a scalar."""
    alpha = log_alpha.exp()
    soft_next = q_target_next - alpha.detach() * logp_next
    target = bellman_target(
        rewards=rewards, next_values=soft_next, terminated=terminated, n_steps=n_steps, gamma=gamma
    )
    td_error = torch.abs(q_pred - target)
    terms = {"loss_critic": torch.mean(weights * td_loss(q_pred, target, critic_loss))}
    if q_twin_pred is not None:
        terms["loss_critic_twin"] = torch.mean(weights * td_loss(q_twin_pred, target, critic_loss))
        td_error = 0.5 * (td_error + torch.abs(q_twin_pred - target))
    terms["loss_actor"] = torch.mean(alpha.detach() * logp_policy - q_policy)
    terms["loss_alpha"] = -torch.mean(log_alpha * (logp_policy.detach() + target_entropy))
    with torch.no_grad():
        diagnostics = {
            "alpha": alpha.detach().reshape(()),
            "log_alpha": log_alpha.detach().reshape(()),
            "logp_mean": logp_policy.mean(),
            "q_mean": q_policy.mean(),
            "q_max": q_policy.max(),
            "q_min": q_policy.min(),
            "target_mean": target.mean(),
            "td_error_mean": td_error.mean(),
            "td_error": td_error.detach(),
        }
    return terms | diagnostics
