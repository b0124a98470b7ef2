"""`model.type: lstm`: rl_platform's LSTM actor-critic (modules/lstm_module.py)."""

from typing import ClassVar, Literal

from rl_platform.spec.base import PositiveInt
from rl_platform.spec.model_type import Activation
from rl_platform.spec.model_types._recurrent import RecurrentModelSpec


class LSTMModelSpec(RecurrentModelSpec):
    """rl_platform's LSTM actor-critic (docs/modules.md)."""

    rl_module: ClassVar[str] = "rl_platform.modules.lstm_module:LSTMActorCriticModule"

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


MODEL_TYPE = LSTMModelSpec
