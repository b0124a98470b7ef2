"""Custom RLModules (new API stack). Importing this package does not import Ray.

Public API for the spec adapter:

    module_class_for(model_type) -> type
        "lstm" -> LSTMActorCriticModule, "transformer_lstm" -> TransformerLSTMModule
        (imported lazily). Build with
        `RLModuleSpec(module_class=module_class_for(t), model_config=<model dict minus type>)`.

    mlp_module_class_for(observation_spaces) -> type | None
        For "mlp"/"default": None (keep RLlib's stock module) when every agent observes a
        Box; MaskedMLPModule when they observe RLlib's action-masking Dict
        `{"observations": Box, "action_mask": Box}`; `SpecError` for any other space.

    history_connector_for(model_config, *, multi_agent=None, agent_ids=None) -> callable
        For transformer_lstm: returns `(env, spaces, device) -> OpponentHistory`, the signature
        `AlgorithmConfig.env_runners(env_to_module_connector=...)` calls in Ray 2.60
        (ray/rllib/algorithms/algorithm_config.py, build_env_to_module_connector). Reads
        `history` (default 90), `encoder` (the window holds `history` frames for `window`,
        only the newest for `streaming`) and `obs_split` (required). `multi_agent=None`
        auto-detects a multi-agent env; `agent_ids` limits the conversion to those agents.

Pure-torch networks (no Ray): nets.py, lstm_net.py, masked_mlp_net.py, transformer.py,
streaming_encoder.py, transformer_lstm_net.py.
"""

from collections.abc import Callable, Collection, Iterable
from typing import Any

from rl_platform.errors import SpecError
from rl_platform.modules.action_mask_space import is_action_mask_space

_MODULE_CLASSES = {
    "lstm": ("rl_platform.modules.lstm_module", "LSTMActorCriticModule"),
    "transformer_lstm": ("rl_platform.modules.transformer_lstm_module", "TransformerLSTMModule"),
}


def module_class_for(model_type: str) -> type:
    """The RLModule class for a spec `model.type` (lazy import; Ray loads only here)."""
    import importlib

    try:
        module_name, class_name = _MODULE_CLASSES[model_type]
    except KeyError:
        raise SpecError(
            [
                f"model.type {model_type!r} has no rl_platform module; use one of "
                f"{sorted(_MODULE_CLASSES)}"
            ],
            source="model",
        ) from None
    return getattr(importlib.import_module(module_name), class_name)


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
    model_config: dict[str, Any],
    *,
    multi_agent: bool | None = None,
    agent_ids: Collection[Any] | None = None,
) -> Callable[..., Any]:
    """`env_to_module_connector` callable building the OpponentHistory piece (see above)."""
    from rl_platform.spec.model import TransformerLSTMModelSpec

    config, _ = TransformerLSTMModelSpec.from_model_config(model_config)
    if config.obs_split is None:
        raise SpecError(
            [
                "model.obs_split is required for transformer_lstm, e.g. "
                "{self: [0, 32], opponent: [32, 64]} or {self: <key>, opponent: <key>}"
            ],
            source="model",
        )
    from rl_platform.connectors.history_window import ObsSplit

    try:
        ObsSplit.from_config(config.obs_split)
    except ValueError as err:
        raise SpecError([f"model.{err}"], source="model") from None
    from rl_platform.connectors.opponent_history import make_history_connector_factory

    return make_history_connector_factory(
        history=config.input_frames,
        obs_split=config.obs_split,
        multi_agent=multi_agent,
        agent_ids=agent_ids,
    )


__all__ = [
    "history_connector_for",
    "is_action_mask_space",
    "mlp_module_class_for",
    "module_class_for",
]
