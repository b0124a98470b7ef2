"""`model.type: mlp` (or `default`, or no `model:`): RLlib's catalog network, or our masked MLP."""

from typing import ClassVar, Literal

from pydantic import StrictBool

from rl_platform.spec.base import PositiveInt
from rl_platform.spec.model_type import ModelTypeSpec


class MLPModelSpec(ModelTypeSpec):
    """RLlib's default catalog network (an MLP, or a CNN under the `atari` wrapper); our masked
    MLP with the same keys for envs with action masks (docs/modules.md)."""

    # Which module depends on the env (action masks, `atari`) and the algo (BC trains PPO's
    # module), so a function of the whole spec builds it.
    rl_module: ClassVar[str] = "rl_platform.rllib.rl_module_spec:mlp_module_spec"
    off_policy_nets: ClassVar[bool] = True

    type: Literal["default", "mlp"] = "default"
    """`default`/`mlp`: RLlib's catalog MLP; rl_platform's masked MLP on action-mask envs."""
    hidden: list[PositiveInt] = [256, 256]
    """Hidden layer sizes."""
    activation: Literal["tanh", "relu", "silu"] = "tanh"
    """Hidden activation."""
    vf_share_layers: StrictBool = False
    """Share the trunk between policy and value function."""
    free_log_std: StrictBool = False
    """Continuous (Box) actions: the Gaussian's log standard deviation is one learned
    parameter per action dimension, starting at 0, not an output of the network (RLlib's
    `free_log_std`; CleanRL's and SB3's state-independent log std)."""


MODEL_TYPE = MLPModelSpec
