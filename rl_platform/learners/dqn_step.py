"""One DQN update as one function over fixed shapes, with no host read (plain torch, no Ray).

Per sampled batch, as RLlib's `DQNTorchLearner` with its default module
(ray/rllib/algorithms/dqn/torch/dqn_torch_learner.py, default_dqn_torch_rl_module.py): the
online net reads s and s' in one forward (double Q: it picks the next action), the target
net reads s' without gradient, the terms come from rl_platform/losses/dqn.py, then one
backward, the global-norm clip and Adam on device tensors (rl_platform/learners/
clipped_adam.py; RLlib's default `torch.optim.Adam`, eps 1e-8).

The target net is not moved here: RLlib syncs it every `target_network_update_freq` env
steps sampled (with `tau`, 1.0 by default: a copy), a count the caller holds on the host, so
the caller calls `sync_target` when it is due. The step returns the batch's TD errors (for
`PrioritizedSampler.update_priorities`) and adds its metrics to `metrics`.
"""

from dataclasses import dataclass

import torch

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.learners.clipped_adam import ClippedAdams
from rl_platform.learners.metric_sums import MetricSums
from rl_platform.learners.polyak import TargetPair
from rl_platform.losses.bellman import TDLoss
from rl_platform.losses.dqn import dqn_loss
from rl_platform.losses.ppo import total_loss
from rl_platform.nets.q_nets import DiscreteQNet
from rl_platform.replay.store import ReplayBatch

METRIC_KEYS = {
    "loss/td": "loss_td",
    "dqn/q_mean": "q_mean",
    "dqn/target_mean": "target_mean",
    "dqn/td_error_mean": "td_error_mean",
    "gradients/global_norm": "grad_norm",
    HEALTH_NONFINITE_KEY: "nonfinite",
}
"""Metric key -> the term it reads."""


@dataclass(frozen=True)
class DQNSettings:
    gamma: float = 0.99
    lr: float = 5e-4
    grad_clip: float | None = None
    double_q: bool = True
    loss: TDLoss = "huber"
    adam_eps: float = 1e-8


class DQNStep:
    """The update of `q_net` on one batch against `target_net` (module docstring)."""

    def __init__(
        self, q_net: DiscreteQNet, target_net: DiscreteQNet, settings: DQNSettings
    ) -> None:
        self.q_net, self.target_net, self.settings = q_net, target_net, settings
        optimizer = torch.optim.Adam(q_net.parameters(), lr=settings.lr, eps=settings.adam_eps)
        self.optimizers = ClippedAdams([optimizer], grad_clip=settings.grad_clip)
        self.targets = TargetPair([q_net], [target_net])
        device = next(q_net.parameters()).device
        self.metrics = MetricSums(tuple(METRIC_KEYS), device=device)

    def __call__(self, batch: ReplayBatch) -> torch.Tensor:
        """One update; the batch's TD errors [B]."""
        terms = self.loss_terms(batch)
        self.optimizers.zero_grad()
        total_loss(terms).backward()
        norms, ok = self.optimizers.step()
        terms |= {"grad_norm": norms[0], "nonfinite": 1.0 - ok}
        self.metrics.add({key: terms[term] for key, term in METRIC_KEYS.items()})
        return terms["td_error"]

    def sync_target(self, tau: float = 1.0) -> None:
        """target <- tau * online + (1 - tau) * target; 1.0 copies (RLlib's DQN default)."""
        self.targets.update(tau)

    def loss_terms(self, batch: ReplayBatch) -> dict[str, torch.Tensor]:
        """DQN's terms (rl_platform/losses/dqn.py) under the current parameters."""
        q_next_online = None
        if self.settings.double_q:
            both = self.q_net(torch.cat([batch.obs, batch.next_obs], dim=0))
            q_values, q_next_online = both.chunk(2, dim=0)
        else:
            q_values = self.q_net(batch.obs)
        with torch.no_grad():
            q_next_target = self.target_net(batch.next_obs)
        return dqn_loss(
            q_values=q_values,
            actions=batch.actions,
            q_next_target=q_next_target,
            q_next_online=q_next_online,
            rewards=batch.rewards,
            terminated=batch.terminated,
            n_steps=batch.n_steps,
            weights=batch.weights,
            gamma=self.settings.gamma,
            loss=self.settings.loss,
        )
