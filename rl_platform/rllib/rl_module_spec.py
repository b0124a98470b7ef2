"""The one place that turns a spec's `model:` into an RLModule spec, for training and loading.

`module_spec_for(spec)` is what `rllib.config` hands to RLlib (per module for multi-agent
envs): the model type's `rl_module` (rl_platform/spec/model_type.py), imported here, so the
spec stays Ray-free. `resolved_module_spec(spec, ...)` completes it for given spaces exactly as
RLlib does at training time (the algorithm's default module class and model config fill the
gaps), so `rlp eval` rebuilds a checkpoint's module without building an algorithm.
`mlp_module_spec` is the MLP type's `rl_module`.
"""

import importlib
from typing import Any

import gymnasium as gym
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rl_platform.base.errors import SpecError
from rl_platform.modules import mlp_module_class_for
from rl_platform.modules.off_policy_modules import DQNModule, SACModule
from rl_platform.rllib.algorithms import algorithm_config_class
from rl_platform.rllib.facts import run_facts
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.training import DQNTraining, SACTraining

# Algorithms whose learners read ACTION_DIST_INPUTS and values (ValueFunctionAPI), which is
# what rl_platform/modules/masked_mlp_module.py provides; DQN and SAC need Q-networks.
MASKED_MLP_ALGOS = ("PPO", "APPO", "IMPALA", "BC")
# Atari frames through RLlib's stock CNN encoder, as RLlib's tuned Atari PPO example
# (64x64 frames -> 4x4 after four stride-2 layers; rl_platform/env_adapters/registry.py, ATARI_DIM).
ATARI_CONV_FILTERS = [[16, 4, 2], [32, 4, 2], [64, 4, 2], [128, 4, 2]]


def _masked_mlp_spec(spec: ExperimentSpec) -> RLModuleSpec | None:
    """Our masking MLP for envs observing RLlib's action-masking Dict, which RLlib's catalog
    cannot encode ("No default encoder config for obs space=Dict(...)"); None for Box envs,
    which keep RLlib's stock module (same runs, same checkpoints as before)."""
    # A model type's `rl_module` factory is called with the spec alone (the model-type API,
    # spec/model_type.py; a user's type has the same signature), by config building and by
    # rebuilding a checkpoint's module, so the spaces are read here.
    module_class = mlp_module_class_for(run_facts(spec).observation_spaces)
    if module_class is None:
        return None
    if spec.algo not in MASKED_MLP_ALGOS:
        raise SpecError(
            [
                f"model.type {spec.model.type}: env {spec.env.id!r} masks actions, which our "
                f"masked MLP supports for {', '.join(MASKED_MLP_ALGOS)}, not {spec.algo}"
            ],
            source="model",
        )
    return RLModuleSpec(module_class=module_class, model_config=dict(spec.model.settings))


def _stock_mlp_spec(spec: ExperimentSpec) -> RLModuleSpec:
    model = spec.model
    if "atari" in spec.env.wrappers:
        model_config = DefaultModelConfig(
            conv_filters=ATARI_CONV_FILTERS,
            conv_activation="relu",
            head_fcnet_hiddens=list(model.hidden),
            vf_share_layers=True,
        )
    else:
        model_config = DefaultModelConfig(
            fcnet_hiddens=list(model.hidden),
            fcnet_activation=model.activation,
            vf_share_layers=model.vf_share_layers,
            free_log_std=model.free_log_std,
        )
    if spec.algo == "BC":
        # PPO's module, not BC's own: the weights then carry PPO's parameter names and a later
        # `init_from:` of a PPO run loads them directly (docs/bc.md, offline BC).
        from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
            DefaultPPOTorchRLModule,
        )

        return RLModuleSpec(module_class=DefaultPPOTorchRLModule, model_config=model_config)
    return RLModuleSpec(model_config=model_config)


def mlp_module_spec(spec: ExperimentSpec) -> RLModuleSpec:
    """`model.type: mlp`: RLlib's catalog module (a CNN under `atari`), or our masked MLP for
    envs observing an action mask."""
    if "atari" not in spec.env.wrappers and (masked := _masked_mlp_spec(spec)) is not None:
        return masked
    return _stock_mlp_spec(spec)


def _rl_module(spec: ExperimentSpec) -> Any:
    """The model type's `rl_module`, imported if it is a path. A user's type was imported
    from the working directory while the spec validated, so its modules import the same way."""
    target = spec.model.rl_module
    if not isinstance(target, str):
        return target
    module_name, _, attribute = target.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise SpecError(
            [f"model.type {spec.model.type}: its rl_module {target!r} cannot be loaded: {err}"],
            source="model",
        ) from None


def off_policy_module_spec(spec: ExperimentSpec) -> RLModuleSpec:
    """SAC/DQN on the off-policy array path: our module over our nets
    (rl_platform/modules/off_policy_modules.py), with the spec's `mlp` layers."""
    training = spec.training
    config: dict[str, Any] = {
        "hidden": list(spec.model.hidden),
        "activation": spec.model.activation,
    }
    if isinstance(training, SACTraining):
        config |= {"twin_q": training.twin_q, "initial_alpha": training.initial_alpha}
        return RLModuleSpec(module_class=SACModule, model_config=config)
    assert isinstance(training, DQNTraining)
    return RLModuleSpec(module_class=DQNModule, model_config=config | {"dueling": training.dueling})


def module_spec_for(spec: ExperimentSpec) -> RLModuleSpec:
    """The RLModule spec of the spec's learning module(s), before spaces are known."""
    if spec.algo in ("SAC", "DQN") and spec.learner_choice().kind == "array":
        return off_policy_module_spec(spec)
    target = _rl_module(spec)
    if isinstance(target, type):
        return RLModuleSpec(module_class=target, model_config=dict(spec.model.settings))
    return target(spec)


def resolved_module_spec(
    spec: ExperimentSpec, *, observation_space: gym.Space, action_space: gym.Space
) -> RLModuleSpec:
    """`module_spec_for(spec)` completed by the algorithm's defaults for these spaces: the
    spec RLlib builds a learner's module from (full module, not the inference-only one)."""
    config = algorithm_config_class(spec.algo)().rl_module(rl_module_spec=module_spec_for(spec))
    module_spec = config.get_rl_module_spec(
        spaces={DEFAULT_MODULE_ID: (observation_space, action_space)}
    )
    module_spec.inference_only = False
    return module_spec
