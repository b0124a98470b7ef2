"""The LSTM actor-critic network in plain torch: obs -> MLP encoder -> LSTM -> actor / critic.

Used by `LSTMActorCriticModule` (the Ray adapter) and testable without Ray. The encoder and
LSTM form the actor's trunk; `encode` returns its per-step output ("embeddings"). The critic
reads those (`critic_input: memory`, a shared trunk: the value head reuses the policy pass,
RLlib's `Columns.EMBEDDINGS` convention) or the observation through its own MLP
(`critic_input: observation`, `critic_observation`).
"""

import gymnasium as gym
import torch
from torch import nn

from rl_platform.nets.blocks import MLP, ActionHead, LSTMCore, ValueHead, apply_action_mask
from rl_platform.spec.model_types.lstm import LSTMModelSpec

State = dict[str, torch.Tensor]


class LSTMActorCriticNet(nn.Module):
    """obs [B, T, obs_dim] + state {"h", "c"}: [B, C] -> embeddings [B, T, E] + new state
    (E = C, or C + encoder width with `lstm_skip`)."""

    def __init__(self, *, obs_dim: int, action_space: gym.Space, config: LSTMModelSpec) -> None:
        super().__init__()
        self.encoder = MLP(obs_dim, config.encoder, activation=config.activation)
        self.lstm = LSTMCore(self.encoder.out_dim, config.lstm_cell_size, skip=config.lstm_skip)
        embedding_dim = self.lstm.out_dim
        self.actor = ActionHead(
            embedding_dim, action_space, hidden=config.actor, activation=config.activation
        )
        self.critic_reads_memory = config.critic_input == "memory"
        critic_in = embedding_dim if self.critic_reads_memory else obs_dim
        self.critic = ValueHead(critic_in, hidden=config.critic, activation=config.activation)

    def initial_state(self) -> State:
        """Unbatched zero state: {"h": [C], "c": [C]}."""
        h, c = self.lstm.initial_state(1)
        return {"h": h[0], "c": c[0]}

    def own_observation(self, obs: torch.Tensor) -> torch.Tensor:
        """[B, T, *obs_shape] -> [B, T, obs_dim] float: the encoder's input."""
        return obs.flatten(start_dim=2).float()

    def critic_observation(self, obs: torch.Tensor) -> torch.Tensor:
        """The critic's input with `critic_input: observation`: the observation itself."""
        return self.own_observation(obs)

    def encode(
        self,
        obs: torch.Tensor,
        state: State,
        seq_lens: torch.Tensor | None = None,
        resets: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, State]:
        features = self.encoder(self.own_observation(obs))
        out, (h, c) = self.lstm(features, (state["h"], state["c"]), seq_lens, resets)
        return out, {"h": h, "c": c}

    def policy(self, embeddings: torch.Tensor, action_mask: torch.Tensor | None) -> torch.Tensor:
        return apply_action_mask(self.actor(embeddings), action_mask)

    def value(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.critic(embeddings)
