"""The `model:` section: one schema for the spec and for the RLModules that read it.

The spec validates `model:` against these models; the spec adapter hands each RLModule
`model_config = <model keys minus type>`, and the module parses that dict with the same model
(`from_model_config`). RLlib may merge algorithm auto-includes into a module's config (APPO adds
`vf_share_layers`), so module-side parsing returns unknown keys instead of rejecting them, and
turns a wrong value into a `SpecError` the CLI shows without a traceback.
"""

import math
from typing import Annotated, Any, Literal, Self

from pydantic import Discriminator, Field, StrictBool, Tag, ValidationError, model_validator

from rl_platform.errors import SpecError
from rl_platform.spec.base import SpecModel

PositiveInt = Annotated[int, Field(gt=0)]
Activation = Literal["relu", "tanh", "silu", "gelu", "elu"]


def _flatten_settings(raw: dict[str, Any]) -> dict[str, Any]:
    # A `settings` sub-dict carries module keys; accept them nested or flat.
    settings = raw.get("settings")
    if isinstance(settings, dict):
        return {**{k: v for k, v in raw.items() if k != "settings"}, **settings}
    return dict(raw)


def _problems(error: ValidationError) -> list[str]:
    return [
        f"model.{'.'.join(str(part) for part in e['loc']) or '<root>'}: {e['msg']}"
        for e in error.errors()
    ]


class _ModuleModelSpec(SpecModel):
    """Shared by the model specs: the keys handed to the RLModule as its `model_config`."""

    @property
    def settings(self) -> dict[str, Any]:
        """This model's keys minus `type`: the RLModule's `model_config`."""
        return self.model_dump(mode="json", exclude={"type"})

    @classmethod
    def from_model_config(cls, raw: dict[str, Any] | None) -> tuple[Self, list[str]]:
        """Parse an RLModule's `model_config`; returns the model and the keys it does not know."""
        values = _flatten_settings(raw or {})
        values.pop("type", None)
        names = set(cls.model_fields)
        unknown = sorted(k for k in values if k not in names)
        try:
            model = cls.model_validate({k: v for k, v in values.items() if k in names})
        except ValidationError as error:
            raise SpecError(_problems(error), source="model") from None
        return model, unknown


class MLPModelSpec(_ModuleModelSpec):
    """RLlib's default catalog network (an MLP, or a CNN under the `atari` wrapper); our masked
    MLP with the same keys for envs with action masks (docs/modules.md)."""

    type: Literal["default", "mlp"] = "default"
    """`default`/`mlp`: RLlib's catalog MLP; rl_platform's masked MLP on action-mask envs."""
    hidden: list[PositiveInt] = [256, 256]
    """Hidden layer sizes."""
    activation: Literal["tanh", "relu", "silu"] = "tanh"
    """Hidden activation."""
    vf_share_layers: StrictBool = False
    """Share the trunk between policy and value function."""


class _RecurrentModelSpec(_ModuleModelSpec):
    """Shared by the recurrent models (`lstm`, `transformer_lstm`)."""

    critic_input: Literal["memory", "observation"] = "memory"
    """What the value head reads. `memory`: the trunk's output (encoder + LSTM), shared with
    the actor. `observation`: the current observation (transformer_lstm: the own features and
    the opponent's newest frame) through its own MLP (`critic` sizes), no recurrent state, so
    the value loss never reaches the actor's trunk (as the MLP model with `vf_share_layers:
    false`). On the duel the shared trunk needed a value-loss weight of 0.1 to keep what the
    policy learned (docs/modules.md)."""
    lstm_skip: StrictBool = False
    """The heads read the LSTM's input beside its output (a residual path around the memory):
    what the current step shows reaches the policy without passing the LSTM's gates, and the
    memory adds what the step does not show."""


class LSTMModelSpec(_RecurrentModelSpec):
    """rl_platform's LSTM actor-critic (docs/modules.md)."""

    type: Literal["lstm"] = "lstm"
    encoder: list[PositiveInt] = [256]
    """MLP encoder before the LSTM."""
    lstm_cell_size: PositiveInt = 512
    """LSTM hidden size."""
    actor: list[PositiveInt] = [96, 96]
    """Policy head hidden sizes."""
    critic: list[PositiveInt] = [96, 96]
    """Value head hidden sizes."""
    max_seq_len: PositiveInt = 32
    """Training sequence chunk length."""
    activation: Activation = "relu"
    """Hidden activation."""


class TransformerLSTMModelSpec(_RecurrentModelSpec):
    """Transformer opponent-history encoder feeding an LSTM actor-critic (docs/modules.md)."""

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


def _model_tag(value: Any) -> str:
    """Which model spec applies; a missing `type` means RLlib's default MLP."""
    kind = value.get("type", "default") if isinstance(value, dict) else value.type
    return "mlp" if kind in ("default", "mlp") else str(kind)


ModelSpec = Annotated[
    Annotated[MLPModelSpec, Tag("mlp")]
    | Annotated[LSTMModelSpec, Tag("lstm")]
    | Annotated[TransformerLSTMModelSpec, Tag("transformer_lstm")],
    Discriminator(_model_tag),
]
MODEL_TYPES = {"default": MLPModelSpec, "mlp": MLPModelSpec, "lstm": LSTMModelSpec}
MODEL_TYPES |= {"transformer_lstm": TransformerLSTMModelSpec}
