"""The transformer_lstm networks in plain torch (no Ray import).

Per time step: opponent history -> strategy encoder -> strategy latent + tokens; own
observation -> MLP -> cross-attends to the tokens (ConditionedExtractor); concat
[obs features, strategy latent] (2 * d_model) -> Linear -> d_model -> LSTM -> actor / critic
heads (`critic_input: observation`: the critic is an MLP on the current observation instead;
`lstm_skip`: the heads read the LSTM's input beside its output; `opponent_prediction`: a
linear head on the embeddings predicts the opponent's next frame, an auxiliary loss;
`opponent_action`: a head on the LSTM's input predicts the opponent's action, another).
Two strategy encoders (`model.encoder`):
- `TransformerLSTMNet` (`window`): re-encodes the last H frames at every step;
- `StreamingTransformerLSTMNet` (`streaming`): encodes each frame once and keeps the keys and
  values of the last H - 1 tokens in its recurrent state (streaming_encoder.py).

Input dict (the connector's observation, see rl_platform/connectors/opponent_history.py):
    "obs":              [B, T, obs_dim]  the agent's own features
    "opponent_history": [B, T, F, D]     last F opponent frames, oldest first, left zero-padded
                                         (F = `input_frames`: H for window, 1 for streaming)
    "history_mask":     [B, T, F]        1.0 where a frame is real, 0.0 for padding

`precision="bf16"` runs the transformer part under CUDA bf16 autocast; the LSTM, its state
and the heads stay fp32 (a bf16 recurrent state would accumulate rounding over long
episodes, and RLlib's distributions expect fp32 inputs). On CPU the flag is a no-op.
"""

import functools
from contextlib import AbstractContextManager

import gymnasium as gym
import torch
from loguru import logger
from torch import nn

from rl_platform.base.observation_keys import HISTORY_KEY, MASK_KEY, SELF_KEY
from rl_platform.nets.blocks import (
    MLP,
    ActionHead,
    LSTMCore,
    ValueHead,
    apply_action_mask,
    count_parameters,
)
from rl_platform.nets.streaming_encoder import SlidingWindow, StreamingEncoder, cached_attention
from rl_platform.nets.transformer import ConditionedExtractor, StrategyEncoder, key_padding
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

State = dict[str, torch.Tensor]
# Streaming state keys besides "h", "c" (StreamingTransformerLSTMNet).
KV_VALID_KEY = "kv_valid"  # 1.0 where a cache entry holds a token [H - 1]
POSITION_KEY = "position"  # episode position of the next token [1]


def kv_key(slot: int) -> str:
    """State key of one attention's cached keys/values [2, kv_heads, H - 1, head_dim]."""
    return f"kv_{slot}"


class TransformerLSTMBase(nn.Module):
    """Strategy encoder (given) + conditioned extractor + LSTM + actor/critic."""

    def __init__(
        self,
        *,
        strategy: nn.Module,
        obs_dim: int,
        frame_dim: int,
        action_space: gym.Space,
        config: TransformerLSTMModelSpec,
    ) -> None:
        super().__init__()
        self.history = config.history
        self.use_bf16 = config.precision == "bf16"
        # Registered first, as before the base class existed: the order fixes parameter init
        # under a seed and the optimizer-state layout of existing checkpoints.
        self.strategy = strategy
        self.extractor = ConditionedExtractor(
            obs_dim=obs_dim,
            d_model=config.d_model,
            heads=config.heads,
            hidden=config.obs_encoder,
            activation=config.activation,
            kv_heads=config.key_value_heads,
        )
        self.lstm = LSTMCore(self.extractor.out_dim, config.lstm_cell_size, skip=config.lstm_skip)
        embedding_dim, act = self.lstm.out_dim, config.activation
        self.actor = ActionHead(embedding_dim, action_space, hidden=config.actor, activation=act)
        self.critic_reads_memory = config.critic_input == "memory"
        critic_in = embedding_dim if self.critic_reads_memory else obs_dim + frame_dim
        self.critic = ValueHead(critic_in, hidden=config.critic, activation=act)
        # The auxiliary head (`opponent_prediction`): the opponent's next frame from now.
        self.opponent_head = (
            nn.Linear(embedding_dim, frame_dim) if config.opponent_prediction > 0 else None
        )
        # The auxiliary head (`opponent_action`): the opponent's action at this step. With
        # `opponent_action_input: features` it reads the LSTM's input, what the current frame
        # and the history show, so its loss trains the history path rather than the memory;
        # with `memory`, what the policy head reads, so it trains the LSTM too.
        self.opponent_action_reads_memory = (
            config.opponent_action_input == "memory" or not config.lstm_skip
        )
        action_in = embedding_dim if self.opponent_action_reads_memory else self.extractor.out_dim
        self.opponent_action_head = (
            _OpponentActionHead(action_in, action_space, activation=act)
            if config.opponent_action > 0
            else None
        )
        _announce(
            f"transformer_lstm ({config.encoder}): {count_parameters(self):,} parameters "
            f"(strategy encoder {count_parameters(self.strategy):,}, "
            f"extractor {count_parameters(self.extractor):,}, "
            f"LSTM {count_parameters(self.lstm):,}, "
            f"heads {count_parameters(self.actor) + count_parameters(self.critic):,})"
        )

    def initial_state(self) -> State:
        """Unbatched zero LSTM state: {"h": [C], "c": [C]}."""
        h, c = self.lstm.initial_state(1)
        return {"h": h[0], "c": c[0]}

    def own_observation(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The own features [B, T, obs_dim]: the obs path's input."""
        return inputs[SELF_KEY].float()

    def critic_observation(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The critic's input with `critic_input: observation`: the current observation, i.e.
        the own features and the opponent's newest frame (zeros if padding) [B, T, obs + D]."""
        newest = inputs[HISTORY_KEY][:, :, -1].float() * inputs[MASK_KEY][:, :, -1:].float()
        return torch.cat([self.own_observation(inputs), newest], dim=-1)

    def autocast(self, device: torch.device) -> AbstractContextManager:
        """bf16 autocast for the attention part when `precision: bf16` on CUDA. While a CUDA
        graph is captured, without autocast's weight cache (torch.cuda.graphs' rule: the
        casts must be part of the graph, so that replays read the current weights)."""
        enabled = self.use_bf16 and device.type == "cuda"
        capturing = enabled and torch.cuda.is_current_stream_capturing()
        return torch.autocast(
            device_type=device.type,
            dtype=torch.bfloat16,
            enabled=enabled,
            cache_enabled=not capturing,
        )

    def policy(self, embeddings: torch.Tensor, action_mask: torch.Tensor | None) -> torch.Tensor:
        return apply_action_mask(self.actor(embeddings), action_mask)

    def value(self, embeddings: torch.Tensor) -> torch.Tensor:
        return self.critic(embeddings)

    def predict_opponent(self, embeddings: torch.Tensor) -> torch.Tensor | None:
        """The opponent's next frame [B, T, D] from the embeddings, or None without the head."""
        return None if self.opponent_head is None else self.opponent_head(embeddings)

    def infer_opponent_action(self, embeddings: torch.Tensor) -> torch.Tensor | None:
        """Logits [B, T, A] of the opponent's action at each step, or None without the head.
        The head reads the LSTM's input (the last features of the embeddings with
        `lstm_skip`), or all of the embeddings (`opponent_action_input: memory`, or no skip)."""
        if self.opponent_action_head is None:
            return None
        if not self.opponent_action_reads_memory:
            embeddings = embeddings[..., -self.extractor.out_dim :]
        return self.opponent_action_head(embeddings)


class _OpponentActionHead(nn.Module):
    """A small MLP to the logits of a Discrete action space (the opponent's, as ours)."""

    def __init__(self, in_dim: int, action_space: gym.Space, *, activation: str) -> None:
        super().__init__()
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(
                f"model.opponent_action needs a Discrete action space, got {action_space}"
            )
        self.mlp = MLP(in_dim, [64], activation=activation)
        self.out = nn.Linear(self.mlp.out_dim, int(action_space.n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.mlp(x))


class TransformerLSTMNet(TransformerLSTMBase):
    """`encoder: window`: the StrategyEncoder over the last H frames at every step."""

    def __init__(
        self,
        *,
        obs_dim: int,
        frame_dim: int,
        action_space: gym.Space,
        config: TransformerLSTMModelSpec,
    ) -> None:
        strategy = StrategyEncoder(
            frame_dim=frame_dim,
            history=config.history,
            d_model=config.d_model,
            layers=config.layers,
            heads=config.heads,
            ffn_mult=config.ffn_mult,
            kv_heads=config.key_value_heads,
        )
        super().__init__(
            strategy=strategy,
            obs_dim=obs_dim,
            frame_dim=frame_dim,
            action_space=action_space,
            config=config,
        )

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
        with self.autocast(obs.device):
            latent, tokens = self.strategy(frames, valid)
            features = self.extractor(obs, latent, tokens, valid)
        return features.float()

    def encode(
        self,
        inputs: dict[str, torch.Tensor],
        state: State,
        seq_lens: torch.Tensor | None = None,
        resets: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, State]:
        obs = self.own_observation(inputs)
        frames, mask = inputs[HISTORY_KEY].float(), inputs[MASK_KEY]
        b, t = obs.shape[:2]
        features = self.step_features(
            obs.reshape(b * t, -1),
            frames.reshape(b * t, *frames.shape[2:]),
            mask.reshape(b * t, -1),
        )
        state_in = (state["h"], state["c"])
        out, (h, c) = self.lstm(features.view(b, t, -1), state_in, seq_lens, resets)
        return out, {"h": h, "c": c}


class StreamingTransformerLSTMNet(TransformerLSTMBase):
    """`encoder: streaming`: one token per step; the keys/values of the last H - 1 tokens of
    each attention are part of the recurrent state: {"h": [C], "c": [C], "kv_<slot>":
    [2, kv_heads, H - 1, head_dim] for slots 0 .. layers + 1 (the layers, the pooling, the
    cross-attention), "kv_valid": [H - 1], "position": [1]}. One key per slot, not one
    stacked tensor: the next cache is then a view of each attention's keys/values, where
    stacking would copy the whole cache once more per step.
    """

    def __init__(
        self,
        *,
        obs_dim: int,
        frame_dim: int,
        action_space: gym.Space,
        config: TransformerLSTMModelSpec,
    ) -> None:
        strategy = StreamingEncoder(
            frame_dim=frame_dim,
            d_model=config.d_model,
            layers=config.layers,
            heads=config.heads,
            ffn_mult=config.ffn_mult,
            kv_heads=config.key_value_heads,
        )
        super().__init__(
            strategy=strategy,
            obs_dim=obs_dim,
            frame_dim=frame_dim,
            action_space=action_space,
            config=config,
        )
        self.slots = strategy.slots + 1  # the encoder's, then the extractor's cross-attention
        self.groups = config.heads // config.key_value_heads
        head_dim = config.d_model // config.heads
        self.cache_shape = (2, config.key_value_heads, config.history - 1, head_dim)

    def initial_state(self) -> State:
        """LSTM zeros plus an empty cache (no entry valid): an episode start."""
        device = self.lstm.lstm.weight_hh_l0.device
        state = super().initial_state()
        for slot in range(self.slots):
            state[kv_key(slot)] = torch.zeros(self.cache_shape, device=device)
        state[KV_VALID_KEY] = torch.zeros(self.history - 1, device=device)
        state[POSITION_KEY] = torch.zeros(1, device=device)
        return state

    def encode(
        self,
        inputs: dict[str, torch.Tensor],
        state: State,
        seq_lens: torch.Tensor | None = None,
        resets: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, State]:
        """Reads only the newest frame of each step's window; the cache has the older ones.
        `resets` [B, T]: an episode starts at each marked step (no look back past it)."""
        obs = self.own_observation(inputs)
        window = SlidingWindow.build(
            cache_valid=state[KV_VALID_KEY] > 0.5,
            token_valid=inputs[MASK_KEY][:, :, -1] > 0.5,
            position=state[POSITION_KEY][:, 0],
            head_dim=self.cache_shape[-1],
            groups=self.groups,
            seq_lens=seq_lens,
            resets=resets,
        )
        caches = [state[kv_key(i)] for i in range(self.slots)]
        with self.autocast(obs.device):
            frames = inputs[HISTORY_KEY][:, :, -1].float()
            latent, tokens, keys_values = self.strategy(frames, caches[:-1], window)
            own = self.extractor.own_features(obs)
            attended, cross = cached_attention(
                self.extractor.cross, self.extractor.norm(own), tokens, caches[-1], window
            )
            features = self.extractor.combine(own, attended, latent)
        out, (h, c) = self.lstm(features.float(), (state["h"], state["c"]), seq_lens, resets)
        state_out = {"h": h, "c": c}
        for slot, kv in enumerate([*keys_values, cross]):
            # The next cache is data, like the LSTM state: no gradient flows through it.
            state_out[kv_key(slot)] = window.keep_last(kv.detach(), dim=3).float()
        state_out[KV_VALID_KEY] = window.keep_last(window.key_valid, dim=1).float()
        state_out[POSITION_KEY] = window.next_position[:, None].float()
        return out, state_out


def transformer_lstm_net_for(
    *, obs_dim: int, frame_dim: int, action_space: gym.Space, config: TransformerLSTMModelSpec
) -> TransformerLSTMBase:
    """The network for `config.encoder`."""
    net_class = TransformerLSTMNet if config.encoder == "window" else StreamingTransformerLSTMNet
    return net_class(obs_dim=obs_dim, frame_dim=frame_dim, action_space=action_space, config=config)


@functools.cache
def _announce(description: str) -> None:
    """Log a net's size once per process: a league builds the same net for its main policy,
    each opponent slot and the teacher, and one line says it."""
    logger.info(description)
