"""The keys shared by the recurrent model types (`lstm`, `transformer_lstm`)."""

from typing import ClassVar, Literal

from pydantic import StrictBool

from rl_platform.spec.model_type import ModelTypeSpec


class RecurrentModelSpec(ModelTypeSpec):
    """Shared by the recurrent models (`lstm`, `transformer_lstm`)."""

    stateful: ClassVar[bool] = True

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
