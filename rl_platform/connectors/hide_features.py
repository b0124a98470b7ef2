"""Env-to-module piece that blanks `env.hide`'s features for learned modules (RLlib adapter).

On RLlib's own runner (`env.runner: rllib`) each agent's newest observation is written back
into its episode with the hidden features at 0 (`envs/hidden_view.py`), before the
`OpponentHistory` piece builds windows from it, so the module acts on, and the learner
trains on, the learner's view. Agents played by scripted modules (plain RLModules, not
torch ones: `modules/scripted_module.py`) keep the full frame, as on the array runner
(`env_runner/vector_env_runner.py`, `_forward`). BC's `TeacherLabels` runs before this piece
and labels from the full frame.
"""

from collections.abc import Callable
from typing import Any

import torch
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.annotations import override
from ray.rllib.utils.typing import EpisodeType

from rl_platform.envs.hidden_view import HiddenView


def _learned(rl_module: Any, module_id: Any) -> bool:
    module = rl_module if module_id is None else rl_module[module_id]
    return isinstance(module, torch.nn.Module)


class HideFeatures(ConnectorV2):
    """Blanks `view`'s features in learned modules' observations (module docstring)."""

    def __init__(self, *args: Any, view: HiddenView, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.view = view

    @override(ConnectorV2)
    def __call__(
        self,
        *,
        rl_module: RLModule,
        batch: dict[str, Any],
        episodes: list[EpisodeType],
        **kwargs: Any,
    ) -> Any:
        for sa_episode in self.single_agent_episode_iterator(
            episodes, agents_that_stepped_only=True
        ):
            if not _learned(rl_module, sa_episode.module_id):
                continue
            last = sa_episode.get_observations(-1)
            if isinstance(last, dict):  # already converted by a later piece: seen before
                continue
            sa_episode.set_observations(at_indices=-1, new_data=self.view.apply(last))
        return batch


def with_hidden_features(
    view: HiddenView | None, inner: Callable[..., Any] | None
) -> Callable[..., Any] | None:
    """An `env_to_module_connector` callable: `HideFeatures`, then `inner`'s pieces; `inner`
    itself when nothing is hidden."""
    if view is None:
        return inner

    def factory(env: Any = None, spaces: Any = None, device: Any = None) -> list[Any]:
        pieces = inner(env, spaces, device) if inner is not None else []
        pieces = list(pieces) if isinstance(pieces, list | tuple) else [pieces]
        return [HideFeatures(view=view), *pieces]

    return factory
