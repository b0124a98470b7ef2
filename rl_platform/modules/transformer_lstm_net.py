"""The transformer_lstm network in plain torch (no Ray import).

Per time step: opponent history [H, D] -> StrategyEncoder -> strategy latent + tokens; own
observation -> MLP -> cross-attends to the tokens (ConditionedExtractor); concat
[obs features, strategy latent] (2 * d_model) -> Linear -> d_model -> LSTM -> actor / critic
heads.

Input dict (the connector's observation, see rl_platform/connectors/opponent_history.py):
    "obs":              [B, T, obs_dim]  the agent's own features
    "opponent_history": [B, T, H, D]     last H opponent frames, oldest first, left zero-padded
    "history_mask":     [B, T, H]        1.0 where a frame is real, 0.0 for padding

`precision="bf16"` runs the transformer part under CUDA bf16 autocast; the LSTM, its state
and the heads stay fp32 (a bf16 recurrent state would accumulate rounding over long
episodes, and RLlib's distributions expect fp32 inputs). On CPU the flag is a no-op.
"""

import gymnasium as gym
import torch
from loguru import logger
from torch import nn

from rl_platform.connectors.history_window import HISTORY_KEY, MASK_KEY, SELF_KEY
from rl_platform.modules.nets import (
    ActionHead,
    LSTMCore,
    ValueHead,
    apply_action_mask,
    count_parameters,
)
from rl_platform.modules.transformer import ConditionedExtractor, StrategyEncoder, key_padding
from rl_platform.spec.model import TransformerLSTMModelSpec

State = dict[str, torch.Tensor]


class TransformerLSTMNet(nn.Module):
    """Strategy encoder + conditioned extractor + LSTM + actor/critic (see module docstring)."""

    def __init__(
        self,
        *,
        obs_dim: int,
        frame_dim: int,
        action_space: gym.Space,
        config: TransformerLSTMModelSpec,
    ) -> None:
        super().__init__()
        self.history = config.history
        self.use_bf16 = config.precision == "bf16"
        self.strategy = StrategyEncoder(
            frame_dim=frame_dim,
            history=config.history,
            d_model=config.d_model,
            layers=config.layers,
            heads=config.heads,
            ffn_mult=config.ffn_mult,
            kv_heads=config.key_value_heads,
        )
        self.extractor = ConditionedExtractor(
            obs_dim=obs_dim,
            d_model=config.d_model,
            heads=config.heads,
            hidden=config.obs_encoder,
            activation=config.activation,
            kv_heads=config.key_value_heads,
        )
        self.lstm = LSTMCore(self.extractor.out_dim, config.lstm_cell_size)
        cell, act = config.lstm_cell_size, config.activation
        self.actor = ActionHead(cell, action_space, hidden=config.actor, activation=act)
        self.critic = ValueHead(cell, hidden=config.critic, activation=act)
        logger.info(
            "transformer_lstm: {:,} parameters (strategy encoder {:,}, extractor {:,}, "
            "LSTM {:,}, heads {:,})",
            count_parameters(self),
            count_parameters(self.strategy),
            count_parameters(self.extractor),
            count_parameters(self.lstm),
            count_parameters(self.actor) + count_parameters(self.critic),
        )

    def initial_state(self) -> State:
        """Unbatched zero state: {"h": [C], "c": [C]}."""
        h, c = self.lstm.initial_state(1)
        return {"h": h[0], "c": c[0]}

    def step_features(
        self, obs: torch.Tensor, frames: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Per-step extractor on flat windows: [N, obs_dim], [N, H, D], [N, H] -> [N, d]."""
        if frames.shape[1] != self.history:
            raise ValueError(
                f"opponent history has {frames.shape[1]} frames, the model expects "
                f"{self.history} (model.history)"
            )
        valid = key_padding(mask > 0.5)
        autocast = torch.autocast(
            device_type=obs.device.type,
            dtype=torch.bfloat16,
            enabled=self.use_bf16 and obs.device.type == "cuda",
        )
        with autocast:
            latent, tokens = self.strategy(frames, valid)
            features = self.extractor(obs, latent, tokens, valid)
        return features.float()

    def encode(
        self,
        inputs: dict[str, torch.Tensor],
        state: State,
        seq_lens: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, State]:
        obs = inputs[SELF_KEY].float()
        frames, mask = inputs[HISTORY_KEY].float(), inputs[MASK_KEY]
        b, t = obs.shape[:2]
        features = self.step_features(
            obs.reshape(b * t, -1),
            frames.reshape(b * t, *frames.shape[2:]),
            mask.reshape(b * t, -1),
        )
        out, (h, c) = self.lstm(features.view(b, t, -1), (state["h"], state["c"]), seq_lens)
        return out, {"h": h, "c": c}

    def policy(self, embeddings: torch.Tensor, action_mask: torch.Tensor | None) -> torch.Tensor:
        return apply_action_mask(self.actor(embeddings), action_mask)

    def value(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.critic(embeddings)
