"""Rebuild a run's RLModule on CPU from its spec, without starting an Algorithm or Ray.

The spec in the run folder goes through the same `module_spec_for` as training
(`rl_platform.rllib.rl_module_spec`), so the module class and model config are exactly those of the
checkpoint; only the spaces come from the env the policy will act in. League opponent slots
and exploiters share main's architecture (see `rl_platform.rllib.league_callback.league_modules`),
so any learned module id of a run is built from main's spec.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.rllib.algorithms import algorithm_config_class
from rl_platform.rllib.rl_module_spec import resolved_module_spec
from rl_platform.spec import ExperimentSpec
from rl_platform.storage.layout import SPEC_FILE
from rl_platform.storage.saved_spec import has_saved_spec


@dataclass(frozen=True)
class RebuiltModule:
    module: Any
    """The torch RLModule, in eval mode, with the checkpoint's weights."""
    observation_space: gym.Space
    """What the module reads (the history-converted space for a model reading the opponent's
    history, as transformer_lstm)."""
    action_space: gym.Space
    normalize_actions: bool
    clip_actions: bool


def run_dir_of(path: Path) -> Path:
    """The run folder holding `spec.yaml` for a run, `checkpoints/` or checkpoint folder."""
    for candidate in (path, *list(path.parents)[:3]):
        if has_saved_spec(candidate):
            return candidate
    raise UserError(f"{path}: no {SPEC_FILE} here or in the 3 folders above; is it a run folder?")


def history_converter(spec: ExperimentSpec, raw_space: gym.Space) -> Any | None:
    """An `OpponentHistory` connector (used as a converter) for a model that reads the
    opponent's history (`opponent_history()`, as transformer_lstm), else None."""
    history = spec.model.opponent_history()
    if history is None:
        return None
    from rl_platform.connectors.opponent_history import OpponentHistory

    return OpponentHistory(
        raw_space,
        None,
        history=history.frames,
        obs_split=history.obs_split,
        multi_agent=False,
    )


def build_module(
    spec: ExperimentSpec,
    *,
    observation_space: gym.Space,
    action_space: gym.Space,
    weights: dict[str, np.ndarray] | None,
    inference_only: bool = False,
) -> RebuiltModule:
    """Build the spec's module for these spaces on CPU and load `weights` (None: fresh init).

    `inference_only`: the module an env runner acts with (RLlib's InferenceOnlyAPI drops the
    critic and target copies), loaded from the learner's full weights; acting skips the critic.
    """
    module_spec = resolved_module_spec(
        spec, observation_space=observation_space, action_space=action_space
    )
    module_spec.inference_only = inference_only
    # The spec never changes RLlib's action post-processing, so the algorithm's defaults hold.
    defaults = algorithm_config_class(spec.algo)()
    module = module_spec.build()
    if weights is not None:
        _load_weights(module, weights)
    module.eval()
    return RebuiltModule(
        module=module,
        observation_space=observation_space,
        action_space=action_space,
        normalize_actions=bool(defaults.normalize_actions),
        clip_actions=bool(defaults.clip_actions),
    )


def _load_weights(module: Any, weights: dict[str, np.ndarray]) -> None:
    expected = set(module.get_state())
    missing = sorted(expected - set(weights))
    if missing:
        raise UserError(
            f"checkpoint weights do not fit the rebuilt {type(module).__name__}: missing "
            f"{missing[:3]}{'...' if len(missing) > 3 else ''}; was the spec.yaml edited?"
        )
    try:
        module.set_state({name: weights[name] for name in expected})
    except RuntimeError as exc:  # shape mismatches from load_state_dict
        raise UserError(f"checkpoint weights do not fit the rebuilt module: {exc}") from None
