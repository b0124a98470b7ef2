"""One SAC update as one function over fixed shapes, with no host read (plain torch, no Ray).

Per sampled batch, as RLlib's `SACTorchLearner` does it for continuous actions
(ray/rllib/algorithms/sac/torch/sac_torch_learner.py and its module,
default_sac_torch_rl_module.py, `_forward_train_continuous`), in one pass:

1. forward: the reparameterized action a~ at s, then a' drawn at s' (RLlib's order of
   draws); Q_i(s, a) of the stored action for each critic; min_i Q'_i(s', a') of the target
   critics (no gradient); min_i Q_i(s, a~) with the critics' parameters frozen, so the
   actor's term reaches the policy only;
2. the terms (rl_platform/losses/sac.py) summed and one backward: each term's gradient
   lands on its own parameters only, which is what RLlib's one backward per optimizer gives;
3. every optimizer clipped by its own norm and stepped (rl_platform/learners/clipped_adam.py;
   RLlib's four Adams with eps 1e-7, its SAC default);
4. the target critics move towards the critics by `tau` (RLlib's SAC updates them after
   every update: `target_network_update_freq: 0`).

The step returns the batch's TD errors (for `PrioritizedSampler.update_priorities`) and adds
its metrics to `metrics` (read once per iteration by the caller).
"""

import contextlib
import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.learners.clipped_adam import ClippedAdams
from rl_platform.learners.metric_sums import MetricSums
from rl_platform.learners.polyak import TargetPair
from rl_platform.losses.bellman import TDLoss
from rl_platform.losses.ppo import total_loss
from rl_platform.losses.sac import sac_loss
from rl_platform.nets.q_nets import ContinuousQNet
from rl_platform.nets.squashed_gaussian import SquashedGaussianActor
from rl_platform.replay.store import ReplayBatch

ADAM_EPS = 1e-7
"""RLlib's SAC optimizers' epsilon (`configure_optimizers_for_module`)."""
METRIC_KEYS = {
    "loss/critic": "loss_critic",
    "loss/actor": "loss_actor",
    "loss/alpha": "loss_alpha",
    "sac/alpha": "alpha",
    "sac/logp_mean": "logp_mean",
    "sac/q_mean": "q_mean",
    "sac/target_mean": "target_mean",
    "sac/td_error_mean": "td_error_mean",
    HEALTH_NONFINITE_KEY: "nonfinite",
}
"""Metric key -> the term it reads; `loss/critic_twin` joins them with twin critics."""


@dataclass(frozen=True)
class SACNets:
    actor: SquashedGaussianActor
    critics: tuple[ContinuousQNet, ...]
    """One critic, or two (`training.twin_q`)."""
    target_critics: tuple[ContinuousQNet, ...]
    log_alpha: nn.Parameter
    """[1], as RLlib keeps it; alpha = exp(log_alpha)."""


def make_sac_nets(
    *,
    obs_dim: int,
    action_dim: int,
    hidden: Sequence[int],
    activation: str = "relu",
    twin_q: bool = True,
    initial_alpha: float = 1.0,
    device: torch.device | str = "cpu",
) -> SACNets:
    """The actor, the critics and their targets (copies), and log_alpha, on `device`."""
    actor = SquashedGaussianActor(obs_dim, action_dim, hidden, activation=activation)
    critics = tuple(
        ContinuousQNet(obs_dim, action_dim, hidden, activation=activation).to(device)
        for _ in range(2 if twin_q else 1)
    )
    log_alpha = nn.Parameter(torch.full((1,), float(initial_alpha), device=device).log())
    return SACNets(
        actor=actor.to(device),
        critics=critics,
        target_critics=tuple(copy.deepcopy(c).requires_grad_(False) for c in critics),
        log_alpha=log_alpha,
    )


@dataclass(frozen=True)
class SACSettings:
    gamma: float = 0.99
    tau: float = 0.005
    actor_lr: float = 3e-4
    critic_lr: float = 3e-4
    alpha_lr: float = 3e-4
    target_entropy: float | None = None
    """None: -action_dim (SAC's heuristic, RLlib's `"auto"`)."""
    grad_clip: float | None = None
    critic_loss: TDLoss = "mse"
    """The paper's squared error; "huber" is RLlib's (`training.critic_loss`)."""


@contextlib.contextmanager
def frozen(modules: Sequence[nn.Module]) -> Iterator[None]:
    """The modules' parameters take no gradient inside (RLlib's "straight-through" pass for
    the actor's Q: the action still carries the policy's gradient)."""
    params = [p for module in modules for p in module.parameters()]
    for param in params:
        param.requires_grad_(False)
    try:
        yield
    finally:
        for param in params:
            param.requires_grad_(True)


class SACStep:
    """The update of `nets` on one batch (module docstring)."""

    def __init__(
        self, nets: SACNets, settings: SACSettings, *, generator: torch.Generator | None = None
    ) -> None:
        self.nets, self.settings, self.generator = nets, settings, generator
        action_dim = nets.actor.action_dim
        self.target_entropy = (
            -float(action_dim) if settings.target_entropy is None else settings.target_entropy
        )
        critic_lrs = [settings.critic_lr] * len(nets.critics)
        groups = [c.parameters() for c in nets.critics]
        groups += [nets.actor.parameters(), [nets.log_alpha]]
        lrs = [*critic_lrs, settings.actor_lr, settings.alpha_lr]
        self.optimizers = ClippedAdams(
            [torch.optim.Adam(g, lr=lr, eps=ADAM_EPS) for g, lr in zip(groups, lrs, strict=True)],
            grad_clip=settings.grad_clip,
        )
        self.targets = TargetPair(nets.critics, nets.target_critics)
        keys = dict(METRIC_KEYS)
        if len(nets.critics) == 2:
            keys["loss/critic_twin"] = "loss_critic_twin"
        self.metric_terms = keys
        self.metrics = MetricSums(tuple(keys), device=nets.log_alpha.device)

    def __call__(self, batch: ReplayBatch) -> torch.Tensor:
        """One update; the batch's TD errors [B]."""
        terms = self.loss_terms(batch)
        self.optimizers.zero_grad()
        total_loss(terms).backward()
        _, ok = self.optimizers.step()
        self.targets.update(self.settings.tau)
        terms["nonfinite"] = 1.0 - ok
        self.metrics.add({key: terms[term] for key, term in self.metric_terms.items()})
        return terms["td_error"]

    def loss_terms(self, batch: ReplayBatch) -> dict[str, torch.Tensor]:
        """SAC's terms (rl_platform/losses/sac.py) under the current parameters."""
        nets = self.nets
        action, logp = nets.actor.sample(batch.obs, generator=self.generator)
        with torch.no_grad():
            next_action, next_logp = nets.actor.sample(batch.next_obs, generator=self.generator)
            q_target_next = _min_q(nets.target_critics, batch.next_obs, next_action)
        q_preds = [critic(batch.obs, batch.actions) for critic in nets.critics]
        with frozen(nets.critics):
            q_policy = _min_q(nets.critics, batch.obs, action)
        return sac_loss(
            q_pred=q_preds[0],
            q_twin_pred=q_preds[1] if len(q_preds) == 2 else None,
            q_target_next=q_target_next,
            logp_next=next_logp,
            q_policy=q_policy,
            logp_policy=logp,
            log_alpha=nets.log_alpha,
            rewards=batch.rewards,
            terminated=batch.terminated,
            n_steps=batch.n_steps,
            weights=batch.weights,
            gamma=self.settings.gamma,
            target_entropy=self.target_entropy,
            critic_loss=self.settings.critic_loss,
        )


def _min_q(critics: Sequence[ContinuousQNet], obs: torch.Tensor, action: torch.Tensor):
    values = [critic(obs, action) for critic in critics]
    return values[0] if len(values) == 1 else torch.min(values[0], values[1])
