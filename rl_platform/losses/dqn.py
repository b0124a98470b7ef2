"""The DQN objective as named terms (pure torch, no host reads).

Mnih et al. 2015 (the Q-learning target from a target network), van Hasselt et al. 2016
("Deep Reinforcement Learning with Double Q-learning", eq. 4: the online network picks the
next action, the target network values it), Schaul et al. 2016 (importance weights of
prioritized replay scale each row's loss), n-step targets as in Rainbow (Hessel et al. 2018):
y = r^(n) + gamma^n (1 - terminated) Q'(s_{t+n}, argmax_a Q(s_{t+n}, a)). The dueling head
(Wang et al. 2016) is the net's business (rl_platform/nets/q_nets.py); this reads Q-values.

In the form RLlib's `DQNTorchLearner` computes it without distributional atoms
(ray/rllib/algorithms/dqn/torch/dqn_torch_learner.py): Huber with delta 1 by default
(`td_error_loss_fn`), mean(w * loss) over the batch, `td_error = |Q(s, a) - y|` for the
priorities, and -inf Q-values (masked actions) read as 0 where an action is gathered.
"""

import torch

from rl_platform.losses.bellman import TDLoss, bellman_target, td_loss


def _gather(q_values: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    picked = torch.gather(q_values, -1, actions.long().unsqueeze(-1))
    return torch.nan_to_num(picked, neginf=0.0).squeeze(-1)


def dqn_loss(
    *,
    q_values: torch.Tensor,
    actions: torch.Tensor,
    q_next_target: torch.Tensor,
    q_next_online: torch.Tensor | None,
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    n_steps: torch.Tensor,
    weights: torch.Tensor,
    gamma: float,
    loss: TDLoss = "huber",
) -> dict[str, torch.Tensor]:
    """Named terms of one batch: `q_values` [B, A] of the online net at s, `actions` [B],
    `q_next_target` [B, A] of the target net at the window's next observation and
    `q_next_online` [B, A] of the online net there (double Q; None: the target net picks
    its own maximum). `td_error` is [B]; the other diagnostics are scalars."""
    q_selected = _gather(q_values, actions)
    chooser = q_next_target if q_next_online is None else q_next_online
    best_next = torch.argmax(chooser, dim=-1)
    target = bellman_target(
        rewards=rewards,
        next_values=_gather(q_next_target, best_next),
        terminated=terminated,
        n_steps=n_steps,
        gamma=gamma,
    )
    terms = {"loss_td": torch.mean(weights * td_loss(q_selected, target, loss))}
    with torch.no_grad():
        td_error = torch.abs(q_selected - target)
        diagnostics = {
            "q_mean": q_selected.mean(),
            "target_mean": target.mean(),
            "td_error_mean": td_error.mean(),
            "td_error": td_error,
        }
    return terms | diagnostics
