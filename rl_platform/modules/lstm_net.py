"""The LSTM actor-critic network in plain torch: obs -> MLP encoder -> LSTM -> actor / critic.

Used by `LSTMActorCriticModule` (the Ray adapter) and testable without Ray. The encoder and
LSTM form a trunk shared by both heads; `encode` returns its per-step output ("embeddings"),
so the value head reuses the policy pass (RLlib's `Columns.EMBEDDINGS` convention).
"""

import gymnasium as gym
import torch
from torch import nn

from rl_platform.modules.nets import MLP, ActionHead, LSTMCore, ValueHead, apply_action_mask
from rl_platform.spec.model import LSTMModelSpec

State = dict[str, torch.Tensor]


class LSTMActorCriticNet(nn.Module):
    """obs [B, T, obs_dim] + state {"h", "c"}: [B, C] -> embeddings [B, T, C] + new state."""

    def __init__(self, *, obs_dim: int, action_space: gym.Space, config: LSTMModelSpec) -> None:
        super().__init__()
        self.encoder = MLP(obs_dim, config.encoder, activation=config.activation)
        self.lstm = LSTMCore(self.encoder.out_dim, config.lstm_cell_size)
        self.actor = ActionHead(
            config.lstm_cell_size, action_space, hidden=config.actor, activation=config.activation
        )
        self.critic = ValueHead(
            config.lstm_cell_size, hidden=config.critic, activation=config.activation
        )

    def initial_state(self) -> State:
        """Unbatched zero state: {"h": [C], "c": [C]}."""
        h, c = self.lstm.initial_state(1)
        return {"h": h[0], "c": c[0]}

    def encode(
        self, obs: torch.Tensor, state: State, seq_lens: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, State]:
        features = self.encoder(obs.flatten(start_dim=2).float())
        out, (h, c) = self.lstm(features, (state["h"], state["c"]), seq_lens)
        return out, {"h": h, "c": c}

    def policy(self, embeddings: torch.Tensor, action_mask: torch.Tensor | None) -> torch.Tensor:
        return apply_action_mask(self.actor(embeddings), action_mask)

    def value(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.critic(embeddings)
