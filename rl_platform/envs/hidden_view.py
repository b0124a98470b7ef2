"""`env.hide`: observation features blanked from what the learned policies see (no Ray).

The game, and every scripted player in it (league opponents, BC teachers), keeps the full
frame; only the inputs of learned modules lose the listed features, set to 0. So a scripted
opponent can keep a plan that shows in the frame (`counter`'s blind spot leaks through both
players' HP, shield and stocks, docs/duel.md) while the learner must infer it from the
history. An env wrapper could not do this: it changes what every agent of the env sees.

An env names its features in the catalog (`PlatformEnv.feature_names`); one name may cover
several columns (the duel's names cover both halves of its observation). The view is applied
where learned modules' inputs are built: the array runner's model inputs
(rl_platform/sampling/model_inputs.py), RLlib's env-to-module pipeline
(rl_platform/connectors/hide_features.py) and every evaluated learned policy
(rl_platform/policies/module_policy.py). The spec keeps it, so a reloaded policy sees the
same view.
"""

import difflib
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.envs.catalog import PLATFORM_ENVS


@dataclass(frozen=True)
class HiddenView:
    """What learned policies see of an env's observations: `columns` blanked (last axis)."""

    features: tuple[str, ...]
    columns: tuple[int, ...]

    def apply(self, obs: Any) -> Any:
        """A copy of `obs` (`[..., D]` array) with the hidden columns at 0; None stays None."""
        if obs is None:
            return None
        blanked = np.array(obs, dtype=np.float32, copy=True)
        blanked[..., list(self.columns)] = 0.0
        return blanked


def feature_names_of(env_id: str) -> Mapping[str, tuple[int, ...]]:
    """The env's named observation features and their columns; {} when it names none."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is None or entry.feature_names is None:
        return {}
    module_name, _, attribute = entry.feature_names.partition(":")
    return getattr(importlib.import_module(module_name), attribute)()


def hidden_view(env_id: str, features: Sequence[str]) -> HiddenView | None:
    """The view hiding `features` of `env_id`'s observations; None when nothing is hidden.
    Raises ValueError (one line, with a close name) for a feature the env does not name."""
    if not features:
        return None
    named = feature_names_of(env_id)
    if not named:
        with_names = sorted(e for e, entry in PLATFORM_ENVS.items() if entry.feature_names)
        raise ValueError(
            f"{env_id} does not name its observation features; env.hide works on "
            f"{', '.join(with_names)}"
        )
    for feature in features:
        if feature not in named:
            close = difflib.get_close_matches(feature, named, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it names {', '.join(named)}"
            raise ValueError(f"{env_id} has no observation feature {feature!r}; {hint}")
    columns = sorted({column for feature in features for column in named[feature]})
    return HiddenView(features=tuple(features), columns=tuple(columns))
