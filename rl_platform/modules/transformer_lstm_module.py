"""Transformer opponent encoder + LSTM RLModule (`model.type: transformer_lstm`).

model_config keys (defaults): history 90, encoder window | streaming, layers 6, heads 8,
d_model 256, lstm_cell_size 512, actor [96, 96], critic [96, 96], obs_encoder [256],
ffn_mult 1, precision fp32 | bf16, max_seq_len 32, activation relu, critic_input memory |
observation, lstm_skip false, opponent_prediction 0.0 (with a weight, `forward_train` also
returns "opponent_prediction" [B, T, D] for the learner's auxiliary loss), opponent_action 0.0
(likewise "opponent_action_logits" [B, T, A]), obs_split (read by the connector only).

Batch contract. The module never sees raw env observations: the env-to-module connector
`OpponentHistory` (rl_platform/connectors/opponent_history.py, built by
`rl_platform.modules.history_connector_for(model.opponent_history())`) replaces each observation by
    batch[Columns.OBS] = {
        "obs":              float32 [B, T, obs_dim]   own features (obs_split.self)
        "opponent_history": float32 [B, T, F, D]      last F opponent frames, oldest first,
                                                      left zero-padded; F == input_frames
                                                      (history for window, 1 for streaming)
        "history_mask":     float32 [B, T, F]         1.0 = real frame, 0.0 = padding
        "action_mask":      float32 [B, T, A]         optional, copied from a raw Dict obs
    }
and writes it back into the episode, so the learner trains on the same dicts. The module's
observation space is that connector's output space (checked at build). Time axis, state
(Columns.STATE_IN/STATE_OUT: {"h", "c"}: [B, lstm_cell_size]; `streaming` adds its key/value
cache "kv_0" .. "kv_<layers + 1>": [B, 2, kv_heads, H - 1, head_dim], "kv_valid": [B, H - 1],
"position": [B, 1], see StreamingTransformerLSTMNet) and algorithm APIs: see
recurrent_module.py.
"""

from typing import Any

import gymnasium as gym
import torch
from torch import nn

from rl_platform.base.errors import SpecError
from rl_platform.base.observation_keys import ACTION_MASK_KEY, HISTORY_KEY, MASK_KEY, SELF_KEY
from rl_platform.losses.opponent_action import OPPONENT_ACTION_LOGITS
from rl_platform.losses.opponent_prediction import OPPONENT_PREDICTION
from rl_platform.modules.recurrent_module import RecurrentActorCriticModule
from rl_platform.nets.blocks import flat_dim
from rl_platform.nets.transformer_lstm_net import transformer_lstm_net_for
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec


class TransformerLSTMModule(RecurrentActorCriticModule):
    """Strategy-encoder + LSTM actor-critic over the OpponentHistory observation dict."""

    config_cls = TransformerLSTMModelSpec

    def build_net(self, config: TransformerLSTMModelSpec) -> nn.Module:
        space = self.observation_space
        required = {SELF_KEY, HISTORY_KEY, MASK_KEY}
        if not isinstance(space, gym.spaces.Dict) or not required <= set(space.spaces):
            raise SpecError(
                [
                    f"transformer_lstm needs observations {sorted(required)} written by the "
                    "OpponentHistory connector (rl_platform.modules.history_connector_for), "
                    f"got {space}"
                ],
                source="model",
            )
        history_shape = space[HISTORY_KEY].shape
        if len(history_shape) != 2 or history_shape[0] != config.input_frames:
            raise SpecError(
                [
                    f"opponent_history space {history_shape} does not match history="
                    f"{config.history}: the {config.encoder} encoder reads "
                    f"{config.input_frames} frame(s) per observation"
                ],
                source="model",
            )
        self._has_action_mask = ACTION_MASK_KEY in space.spaces
        self.check_action_mask(self._has_action_mask)
        return transformer_lstm_net_for(
            obs_dim=flat_dim(space[SELF_KEY]),
            frame_dim=int(history_shape[1]),
            action_space=self.action_space,
            config=config,
        )

    def auxiliary_outputs(self, embeddings: torch.Tensor) -> dict[str, torch.Tensor]:
        outputs = {
            OPPONENT_PREDICTION: self.net.predict_opponent(embeddings),
            OPPONENT_ACTION_LOGITS: self.net.infer_opponent_action(embeddings),
        }
        return {name: value for name, value in outputs.items() if value is not None}

    def net_inputs(self, obs: Any) -> tuple[dict[str, torch.Tensor], torch.Tensor | None]:
        return obs, (obs[ACTION_MASK_KEY] if self._has_action_mask else None)
