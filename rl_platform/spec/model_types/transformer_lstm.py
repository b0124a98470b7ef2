"""`model.type: transformer_lstm`: a transformer over the opponent's history feeding an LSTM
actor-critic (modules/transformer_lstm_module.py)."""

import math
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from rl_platform.spec.base import PositiveInt
from rl_platform.spec.model_type import Activation, OpponentHistoryInputs
from rl_platform.spec.model_types._recurrent import RecurrentModelSpec


class TransformerLSTMModelSpec(RecurrentModelSpec):
    """Transformer opponent-history encoder feeding an LSTM actor-critic (docs/modules.md)."""

    rl_module: ClassVar[str] = "rl_platform.modules.transformer_lstm_module:TransformerLSTMModule"

    type: Literal["transformer_lstm"] = "transformer_lstm"
    history: PositiveInt = 90
    """Opponent frames the strategy encoder sees per step (H)."""
    encoder: Literal["window", "streaming"] = "window"
    """`window`: re-encodes the last `history` frames at every step (learned absolute
    positions). `streaming`: encodes each frame once; causal sliding-window attention of width
    `history` with rotary positions and a key/value cache carried in the recurrent state."""
    layers: PositiveInt = 6
    """Pre-norm transformer layers of the strategy encoder."""
    heads: PositiveInt = 8
    """Attention heads (must divide d_model)."""
    kv_heads: PositiveInt | None = None
    """Key/value heads shared by the query heads (grouped-query attention; must divide
    `heads`). Unset: 2 (1 for an odd `heads`); equal to `heads`: plain multi-head attention."""
    d_model: PositiveInt = 256
    """Transformer width and strategy-latent size."""
    lstm_cell_size: PositiveInt = 512
    """LSTM hidden size."""
    actor: list[PositiveInt] = [96, 96]
    """Policy head hidden sizes."""
    critic: list[PositiveInt] = [96, 96]
    """Value head hidden sizes."""
    obs_encoder: list[PositiveInt] = [256]
    """MLP from the agent's own observation to d_model."""
    ffn_mult: PositiveInt = 1
    """Feed-forward width as a multiple of d_model."""
    precision: Literal["fp32", "bf16"] = "fp32"
    """bf16 autocast on CUDA when `bf16`."""
    max_seq_len: PositiveInt = 32
    """Training sequence chunk length."""
    activation: Activation = "relu"
    """Hidden activation."""
    opponent_prediction: Annotated[float, Field(ge=0.0)] = 0.0
    """Weight of an auxiliary loss (rl_platform/losses/opponent_prediction.py): a linear head
    on the per-step embeddings predicts the opponent's next frame, which gives the history
    path a learning signal of its own. 0: no head, no loss."""
    opponent_action: Annotated[float, Field(ge=0.0)] = 0.0
    """Weight of an auxiliary loss (rl_platform/losses/opponent_action.py): a head on the
    per-step features (the current frame and the opponent's history, before the LSTM; the LSTM
    output without `lstm_skip`) predicts the action the opponent takes at this step, which
    trains the history path to tell opponents apart. Needs the array runner (`env.runner:
    vector`), which records the labels. 0: no head, no loss."""
    opponent_action_input: Literal["features", "memory"] = "features"
    """What the `opponent_action` head reads. `features`: the LSTM's input (with
    `lstm_skip`), so its loss trains the history path. `memory`: all the policy head reads,
    the LSTM's output included, so its loss also trains the LSTM to remember what told the
    opponent apart in earlier exchanges, beyond the encoder's `history` frames."""
    obs_split: dict[str, Any] | None = None
    """Own/opponent parts of the observation: `{self: [0, 32], opponent: [32, 64]}` or dict keys.
    Required in an experiment spec (the history connector reads it; the network does not)."""

    @model_validator(mode="after")
    def _heads_divide_width(self) -> "TransformerLSTMModelSpec":
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(
                f"heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})"
            )
        if self.encoder == "streaming" and (self.d_model // self.heads) % 2:
            # Rotary embeddings rotate pairs of features within each head.
            raise ValueError(
                f"encoder streaming needs an even head size, got d_model / heads = "
                f"{self.d_model // self.heads}"
            )
        return self

    @property
    def input_frames(self) -> int:
        """Frames per observation the history connector writes: the whole window for
        `window`; only the newest for `streaming`, which keeps older frames as cached keys
        and values in its recurrent state."""
        return self.history if self.encoder == "window" else 1

    @property
    def key_value_heads(self) -> int:
        """`kv_heads`, or its default: 2 key/value heads (1 for an odd `heads`)."""
        return self.kv_heads if self.kv_heads is not None else math.gcd(self.heads, 2)

    def opponent_history(self) -> OpponentHistoryInputs:
        return OpponentHistoryInputs(frames=self.input_frames, obs_split=self.obs_split)

    def opponent_actions_key(self) -> str | None:
        return "opponent_action" if self.opponent_action > 0 else None

    def loss_terms(self) -> tuple[str, ...]:
        weights = {
            "opponent_action": self.opponent_action,
            "opponent_prediction": self.opponent_prediction,
        }
        return tuple(key for key, weight in weights.items() if weight > 0)


MODEL_TYPE = TransformerLSTMModelSpec
