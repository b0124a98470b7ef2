"""Typed, validated views of the `model_config` dicts our RLModules read (no Ray import).

The spec adapter hands each module `model_config = <spec model dict minus 'type'>`; RLlib may
merge algorithm auto-includes into it (e.g. APPO adds `vf_share_layers`). Unknown keys are
therefore tolerated and returned to the caller (who may log them); wrong values of known keys
raise `SpecError` so the CLI shows them without a traceback.
"""

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from rl_platform.errors import SpecError

ACTIVATIONS = ("relu", "tanh", "silu", "gelu", "elu")
PRECISIONS = ("fp32", "bf16")


def _flatten_settings(raw: dict[str, Any]) -> dict[str, Any]:
    # The spec's `model.settings` sub-dict carries module keys; accept them nested or flat.
    settings = raw.get("settings")
    if isinstance(settings, dict):
        return {**{k: v for k, v in raw.items() if k != "settings"}, **settings}
    return dict(raw)


def _problems_for_sizes(name: str, value: Any, *, allow_empty: bool) -> list[str]:
    if not isinstance(value, list | tuple) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
    ):
        return [f"model.{name}: expected a list of positive ints, got {value!r}"]
    if not value and not allow_empty:
        return [f"model.{name}: must not be empty"]
    return []


def _problems_for_bool(name: str, value: Any) -> list[str]:
    if not isinstance(value, bool):
        return [f"model.{name}: expected true or false, got {value!r}"]
    return []


def _problems_for_int(name: str, value: Any, *, minimum: int = 1) -> list[str]:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        return [f"model.{name}: expected an int >= {minimum}, got {value!r}"]
    return []


class _ModelConfig:
    """Parsing from and writing back to a spec's model dict, shared by the model configs (each
    a frozen dataclass naming its `_SIZES`, `_INTS`, `_BOOLS` and `_MAY_BE_EMPTY` fields)."""

    @classmethod
    def from_model_config(cls, raw: dict[str, Any] | None) -> tuple[Self, list[str]]:
        """Parse `raw`; returns the config and the keys this model does not know."""
        return _parse(cls, raw)

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in _public_items(self)}


@dataclass(frozen=True)
class MLPModelConfig(_ModelConfig):
    """Keys of the `mlp`/`default` model as our masked MLP reads them (rl_platform/modules/
    masked_mlp_module.py); names and defaults as in the spec's `MLPModelSpec`, so one `model:`
    block serves RLlib's stock MLP and ours."""

    hidden: tuple[int, ...] = (256, 256)
    activation: str = "tanh"
    vf_share_layers: bool = False

    _SIZES = ("hidden",)
    _INTS = ()
    _BOOLS = ("vf_share_layers",)
    _MAY_BE_EMPTY = ("hidden",)


@dataclass(frozen=True)
class LSTMModelConfig(_ModelConfig):
    """Keys of the `lstm` model (defaults as in the issue)."""

    encoder: tuple[int, ...] = (256,)
    lstm_cell_size: int = 512
    actor: tuple[int, ...] = (96, 96)
    critic: tuple[int, ...] = (96, 96)
    max_seq_len: int = 32
    activation: str = "relu"

    _SIZES = ("encoder", "actor", "critic")
    _INTS = ("lstm_cell_size", "max_seq_len")
    _BOOLS = ()
    _MAY_BE_EMPTY = ("encoder",)


@dataclass(frozen=True)
class TransformerLSTMModelConfig(_ModelConfig):
    """Keys of the `transformer_lstm` model (defaults as in the issue).

    `obs_split` is read by the opponent-history connector, not by the network; `ffn_mult` is
    the transformer feed-forward width as a multiple of `d_model`; `kv_heads` is the number of
    key/value heads shared by the `heads` query heads (grouped-query attention; None = 2, or 1
    for an odd `heads`), which with the d_model-wide LSTM input keeps the default model at the
    issue's ~4M parameters (docs/modules.md);
    `obs_encoder` is the MLP that maps the agent's own observation to `d_model`.
    """

    history: int = 90
    layers: int = 6
    heads: int = 8
    d_model: int = 256
    lstm_cell_size: int = 512
    actor: tuple[int, ...] = (96, 96)
    critic: tuple[int, ...] = (96, 96)
    obs_encoder: tuple[int, ...] = (256,)
    ffn_mult: int = 1
    kv_heads: int | None = None
    precision: Literal["fp32", "bf16"] = "fp32"
    max_seq_len: int = 32
    activation: str = "relu"
    obs_split: dict[str, Any] | None = field(default=None, compare=False)

    _SIZES = ("actor", "critic", "obs_encoder")
    _INTS = ("history", "layers", "heads", "d_model", "lstm_cell_size", "ffn_mult", "max_seq_len")
    _BOOLS = ()
    _MAY_BE_EMPTY = ()

    @classmethod
    def from_model_config(cls, raw: dict[str, Any] | None) -> tuple[Self, list[str]]:
        """Parse `raw`; returns the config and the keys this model does not know."""
        config, unknown = _parse(cls, raw)
        if config.d_model % config.heads:
            raise SpecError(
                [f"model.d_model ({config.d_model}) must be divisible by heads ({config.heads})"]
            )
        kv_heads = config.kv_heads
        if kv_heads is not None and (
            _problems_for_int("kv_heads", kv_heads) or config.heads % kv_heads
        ):
            raise SpecError(
                [f"model.kv_heads: expected a divisor of heads ({config.heads}), got {kv_heads!r}"]
            )
        return config, unknown

    @property
    def key_value_heads(self) -> int:
        """`kv_heads`, or its default: 2 key/value heads (1 for an odd `heads`)."""
        return self.kv_heads if self.kv_heads is not None else math.gcd(self.heads, 2)


def _public_items(config: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(config, f.name)) for f in dataclasses.fields(config)]


def _parse(cls: type, raw: dict[str, Any] | None) -> tuple[Any, list[str]]:
    values = _flatten_settings(raw or {})
    names = {f.name for f in dataclasses.fields(cls)}
    known = {k: v for k, v in values.items() if k in names}
    unknown = sorted(k for k in values if k not in names)
    problems: list[str] = []
    for name in cls._SIZES:
        if name in known:
            problems += _problems_for_sizes(
                name, known[name], allow_empty=name in cls._MAY_BE_EMPTY
            )
            known[name] = tuple(known[name]) if not problems else known[name]
    for name in cls._INTS:
        if name in known:
            problems += _problems_for_int(name, known[name])
    for name in cls._BOOLS:
        if name in known:
            problems += _problems_for_bool(name, known[name])
    if known.get("activation", "relu") not in ACTIVATIONS:
        problems.append(
            f"model.activation: expected one of {ACTIVATIONS}, got {known['activation']!r}"
        )
    if known.get("precision", "fp32") not in PRECISIONS:
        problems.append(
            f"model.precision: expected one of {PRECISIONS}, got {known['precision']!r}"
        )
    if problems:
        raise SpecError(problems, source="model")
    return cls(**known), unknown
