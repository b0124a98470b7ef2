"""RLModules of the off-policy array path (SAC, DQN): thin adapters over our plain-torch nets.

The array learner (rl_platform/learners/off_policy.py) trains the nets these modules hold with
rl_platform/learners/sac_step.py and dqn_step.py; the modules exist so RLlib's checkpoints,
`rlp eval checkpoint://RUN`, `rlp export` and `policy://FILE.safetensors` see the trained
weights through the usual `forward_inference` (rl_platform/policies/module_policy.py):

- `SACModule`: `actor` (rl_platform/nets/squashed_gaussian.py), `critics`, `target_critics`
  and `log_alpha`; inference returns the actor's [mean, log_std] as ACTION_DIST_INPUTS with
  `SquashedGaussian`: sampled = tanh-squashed Gaussian in [-1, 1], greedy = tanh(mean) (RLlib's
  `TorchSquashedGaussian.to_deterministic` returns the unsquashed mean; ours squashes it), both
  scaled to the env's bounds by the policy (`normalize_actions`);
- `DQNModule`: `q_net` and `target_q_net` (rl_platform/nets/q_nets.py); inference returns
  the greedy (argmax) actions, and the Q-values as ACTION_DIST_INPUTS.

Every net is built on env runners too (no inference-only split): RLlib's weight syncs then
move one state dict shape everywhere. model_config keys: `hidden`, `activation`; SAC adds
`twin_q`, `initial_alpha`; DQN adds `dueling`.
"""

import copy
import math
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import (
    TorchCategorical,
    TorchDeterministic,
    TorchSquashedGaussian,
)
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.annotations import override
from torch import nn

from rl_platform.modules.config_notice import WithoutConfigNotice
from rl_platform.nets.q_nets import ContinuousQNet, DiscreteQNet
from rl_platform.nets.squashed_gaussian import SquashedGaussianActor, squash


class SquashedGaussian(TorchSquashedGaussian):
    """RLlib's squashed Gaussian whose deterministic action is tanh(mean), the policy's own
    noiseless action (rl_platform/nets/squashed_gaussian.py, `greedy_action`)."""

    @override(TorchSquashedGaussian)
    def to_deterministic(self) -> TorchDeterministic:
        return TorchDeterministic(loc=squash(self.loc))


def _flat_obs(batch: dict[str, Any]) -> torch.Tensor:
    obs = batch[Columns.OBS]
    return obs.reshape(obs.shape[0], -1).float()


def frozen_copy(net: nn.Module) -> nn.Module:
    """A target network: a copy that takes no gradient."""
    return copy.deepcopy(net).requires_grad_(False)


class SACModule(WithoutConfigNotice, TorchRLModule):
    """See the module docstring."""

    @override(RLModule)
    def setup(self) -> None:
        config = self.model_config
        obs_dim = int(np.prod(self.observation_space.shape))
        action_dim = int(np.prod(self.action_space.shape))
        hidden, activation = list(config["hidden"]), config["activation"]
        self.actor = SquashedGaussianActor(obs_dim, action_dim, hidden, activation=activation)
        count = 2 if config.get("twin_q", True) else 1
        self.critics = nn.ModuleList(
            ContinuousQNet(obs_dim, action_dim, hidden, activation=activation) for _ in range(count)
        )
        self.target_critics = nn.ModuleList(frozen_copy(critic) for critic in self.critics)
        alpha = math.log(float(config.get("initial_alpha", 1.0)))
        self.log_alpha = nn.Parameter(torch.full((1,), alpha))

    @override(TorchRLModule)
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {Columns.ACTION_DIST_INPUTS: self.actor(_flat_obs(batch))}

    @override(TorchRLModule)
    def get_inference_action_dist_cls(self) -> type[SquashedGaussian]:
        return SquashedGaussian

    @override(TorchRLModule)
    def get_exploration_action_dist_cls(self) -> type[SquashedGaussian]:
        return SquashedGaussian

    @override(TorchRLModule)
    def get_train_action_dist_cls(self) -> type[SquashedGaussian]:
        return SquashedGaussian


class DQNModule(WithoutConfigNotice, TorchRLModule):
    """See the module docstring."""

    @override(RLModule)
    def setup(self) -> None:
        config = self.model_config
        obs_dim = int(np.prod(self.observation_space.shape))
        self.q_net = DiscreteQNet(
            obs_dim,
            int(self.action_space.n),
            list(config["hidden"]),
            dueling=bool(config.get("dueling", True)),
            activation=config["activation"],
        )
        self.target_q_net = frozen_copy(self.q_net)

    @override(TorchRLModule)
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        q_values = self.q_net(_flat_obs(batch))
        return {Columns.ACTIONS: q_values.argmax(dim=-1), Columns.ACTION_DIST_INPUTS: q_values}

    @override(TorchRLModule)
    def get_inference_action_dist_cls(self) -> type[TorchCategorical]:
        return TorchCategorical

    @override(TorchRLModule)
    def get_exploration_action_dist_cls(self) -> type[TorchCategorical]:
        return TorchCategorical

    @override(TorchRLModule)
    def get_train_action_dist_cls(self) -> type[TorchCategorical]:
        return TorchCategorical
