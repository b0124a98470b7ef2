"""Custom RLModules (new API stack). Importing this package does not import Ray.

Which RLModule a `model.type` builds is its type's `rl_module`
(rl_platform/spec/model_types/, read by rl_platform/rllib/rl_module_spec.py). Public API for
the spec adapter:

    mlp_module_class_for(observation_spaces) -> type | None
        For "mlp"/"default": None (keep RLlib's stock module) when every agent observes a
        Box; MaskedMLPModule when they observe RLlib's action-masking Dict
        `{"observations": Box, "action_mask": Box}`; `SpecError` for any other space.

    history_connector_for(inputs, *, multi_agent=None, agent_ids=None) -> callable
        For a model whose `opponent_history()` is `inputs` (transformer_lstm): returns
        `(env, spaces, device) -> OpponentHistory`, the signature
        `AlgorithmConfig.env_runners(env_to_module_connector=...)` calls in Ray 2.60
        (ray/rllib/algorithms/algorithm_config.py, build_env_to_module_connector): windows of
        `inputs.frames` frames, split by `inputs.obs_split` (required). `multi_agent=None`
        auto-detects a multi-agent env; `agent_ids` limits the conversion to those agents.

Pure-torch networks (no Ray) are in `rl_platform/nets/`: blocks.py, lstm_net.py, masked_mlp_net.py,
transformer.py, streaming_encoder.py, transformer_lstm_net.py.
"""

from collections.abc import Callable, Collection, Iterable
from typing import Any

from rl_platform.base.errors import SpecError
from rl_platform.nets.action_mask_space import is_action_mask_space
from rl_platform.spec.model_type import OpponentHistoryInputs


def mlp_module_class_for(observation_spaces: Iterable[Any]) -> type | None:
    """The RLModule class for `model.type: mlp`/`default` given every agent's observation space:
    None keeps RLlib's stock module (Box observations, as before); action-masking Dicts get
    MaskedMLPModule (lazy import; Ray loads only here); anything else is a `SpecError`."""
    import gymnasium as gym

    spaces = list(observation_spaces)
    if all(isinstance(space, gym.spaces.Box) for space in spaces):
        return None
    unsupported = [
        space
        for space in spaces
        if not isinstance(space, gym.spaces.Box) and not is_action_mask_space(space)
    ]
    if unsupported:
        raise SpecError(
            [
                f"model.type mlp cannot read the observation space {unsupported[0]}: it reads a "
                "Box or RLlib's action-masking Dict {'observations': Box, 'action_mask': Box}; "
                "add `flatten_obs` to env.wrappers to flatten other observations"
            ],
            source="model",
        )
    from rl_platform.modules.masked_mlp_module import MaskedMLPModule

    return MaskedMLPModule


def history_connector_for(
    inputs: OpponentHistoryInputs,
    *,
    multi_agent: bool | None = None,
    agent_ids: Collection[Any] | None = None,
) -> Callable[..., Any]:
    """`env_to_module_connector` callable building the OpponentHistory piece (see above)."""
    if inputs.obs_split is None:
        raise SpecError(
            [
                "model.obs_split is required for a model that reads the opponent's history, "
                "e.g. {self: [0, 32], opponent: [32, 64]} or {self: <key>, opponent: <key>}"
            ],
            source="model",
        )
    from rl_platform.nets.history_window import ObsSplit

    try:
        ObsSplit.from_config(inputs.obs_split)
    except ValueError as err:
        raise SpecError([f"model.{err}"], source="model") from None
    from rl_platform.connectors.opponent_history import make_history_connector_factory

    return make_history_connector_factory(
        history=inputs.frames,
        obs_split=inputs.obs_split,
        multi_agent=multi_agent,
        agent_ids=agent_ids,
    )


__all__ = [
    "history_connector_for",
    "is_action_mask_space",
    "mlp_module_class_for",
]
