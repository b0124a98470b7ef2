"""The MLP actor-critic network in plain torch, with optional action masking.

Used by `MaskedMLPModule` (the Ray adapter) and testable without Ray. Same layout as RLlib's
default PPO model for a Box observation (ray/rllib/algorithms/ppo/ppo_catalog.py): with
`vf_share_layers: false` the actor and the critic each get their own `hidden` MLP; with
`true` one trunk feeds both heads. The heads are blocks.py's `ActionHead` (orthogonal init,
gain 0.01: a near-uniform initial policy) and `ValueHead` (gain 1.0). Logits of masked
actions are replaced by `apply_action_mask`, so they are never sampled and get no gradient.

`embed` returns the critic's input ("embeddings"): the trunk output when it is shared, the
flattened observation otherwise, so `critic(embeddings)` never runs the trunk twice. `critic`
is a plain attribute (values = `net.critic(embeddings)`) because the Ray adapter moves it to
the module's top level, as the recurrent adapter does (rl_platform/modules/recurrent_module.py).
"""

import math

import gymnasium as gym
import torch
from torch import nn

from rl_platform.nets.blocks import MLP, ActionHead, ValueHead, apply_action_mask
from rl_platform.spec.model_types.mlp import MLPModelSpec


class MaskedMLPNet(nn.Module):
    """obs [..., *obs_shape] (+ action_mask [..., A]) -> ACTION_DIST_INPUTS [..., A];
    `critic(embeddings)` -> values [...]."""

    def __init__(
        self,
        *,
        obs_shape: tuple[int, ...],
        action_space: gym.Space,
        config: MLPModelSpec,
    ) -> None:
        super().__init__()
        self.obs_ndim = len(obs_shape)
        obs_dim = math.prod(obs_shape)
        self.shared = config.vf_share_layers
        self.trunk = MLP(obs_dim, config.hidden, activation=config.activation)
        self.actor = ActionHead(self.trunk.out_dim, action_space)
        critic_in, critic_hidden = (
            (self.trunk.out_dim, ()) if self.shared else (obs_dim, config.hidden)
        )
        self.critic = ValueHead(critic_in, hidden=critic_hidden, activation=config.activation)

    def flatten(self, obs: torch.Tensor) -> torch.Tensor:
        """Flatten the observation's own dims, keep the leading batch (and time) dims."""
        if self.obs_ndim == 0:
            return obs.float().unsqueeze(-1)
        return obs.flatten(start_dim=obs.dim() - self.obs_ndim).float()

    def policy(self, obs: torch.Tensor, action_mask: torch.Tensor | None) -> torch.Tensor:
        return self.policy_from_trunk(self.trunk(self.flatten(obs)), action_mask)

    def policy_from_trunk(
        self, features: torch.Tensor, action_mask: torch.Tensor | None
    ) -> torch.Tensor:
        return apply_action_mask(self.actor(features), action_mask)

    def forward_train(
        self, obs: torch.Tensor, action_mask: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One pass for the loss: (ACTION_DIST_INPUTS, embeddings for `value`)."""
        flat = self.flatten(obs)
        features = self.trunk(flat)
        return self.policy_from_trunk(features, action_mask), features if self.shared else flat

    def embed(self, obs: torch.Tensor) -> torch.Tensor:
        flat = self.flatten(obs)
        return self.trunk(flat) if self.shared else flat
