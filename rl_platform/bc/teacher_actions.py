"""Module-to-env piece: teacher-led envs act with the teacher; every step gets its BC columns.

Sits in the user slot of RLlib's module-to-env pipeline (after `GetActions`, `TensorToNumpy`,
`UnBatchToIndividualItems`, `ModuleToAgentUnmapping`, `RemoveSingleTsTimeRankFromBatch`; see
ray/rllib/algorithms/algorithm_config.py, build_module_to_env_connector), where each column
maps `(episode_id,)` (single-agent) or `(episode_id, agent_id, module_id)` keys to one item.
For every key of the cloned module it reads the label written by `TeacherLabels` and

* on teacher-led steps replaces `actions` with the teacher's action and recomputes
  `action_logp` under the student's distribution (so the stored logp always belongs to the
  stored action; the learner still keeps these off-policy steps out of PPO via `bc_mode`);
* adds `teacher_action` and `bc_mode`. The env runner stores every remaining column as the
  step's extra model outputs and RLlib's `AddColumnsFromEpisodesToTrainBatch` puts them in
  the train batch (ray/rllib/connectors/learner/add_columns_from_episodes_to_train_batch.py).

Evaluation (`explore=False`) passes through untouched.
"""

from collections.abc import Collection
from typing import Any

import numpy as np
import torch
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.bc.teacher_labels import LABELS_KEY
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode


class TeacherLedActions(ConnectorV2):
    """Overrides teacher-led actions and writes `teacher_action` / `bc_mode` (module doc)."""

    def __init__(
        self,
        input_observation_space: Any = None,
        input_action_space: Any = None,
        *,
        multi_agent: bool,
        modules: Collection[str] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.multi_agent = multi_agent
        self.modules = frozenset(modules)

    def _cloned(self, key: tuple) -> bool:
        return not self.multi_agent or key[2] in self.modules

    @override(ConnectorV2)
    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        labels = (shared_data or {}).get(LABELS_KEY)
        if not explore or labels is None or Columns.ACTIONS not in batch:
            return batch
        teacher_col, mode_col = {}, {}
        overridden: dict[Any, list[tuple]] = {}
        for key, items in batch[Columns.ACTIONS].items():
            if not self._cloned(key):
                continue
            action, mode = labels.get(key[:2] if self.multi_agent else key, (-1, BCMode.PLAIN))
            teacher_col[key] = [np.int64(action)]
            mode_col[key] = [np.int64(mode)]
            if mode == BCMode.TEACHER_LED:
                items[0] = np.asarray(action, dtype=np.asarray(items[0]).dtype)
                module_id = key[2] if self.multi_agent else None
                overridden.setdefault(module_id, []).append(key)
        batch[TEACHER_ACTION] = teacher_col
        batch[BC_MODE] = mode_col
        for module_id, keys in overridden.items():
            module = rl_module[module_id] if module_id is not None else rl_module
            _recompute_logp(batch, keys, module)
        return batch


def _recompute_logp(batch: dict[str, Any], keys: list[tuple], module: Any) -> None:
    """`action_logp` of the (new) actions under the student's exploration distribution."""
    if Columns.ACTION_DIST_INPUTS not in batch or Columns.ACTION_LOGP not in batch:
        return
    logits = np.stack([batch[Columns.ACTION_DIST_INPUTS][key][0] for key in keys])
    actions = np.stack([np.asarray(batch[Columns.ACTIONS][key][0]) for key in keys])
    dist = module.get_exploration_action_dist_cls().from_logits(torch.from_numpy(logits))
    with torch.no_grad():
        logp = dist.logp(torch.from_numpy(actions)).numpy()
    for key, value in zip(keys, logp, strict=True):
        old = batch[Columns.ACTION_LOGP][key][0]
        batch[Columns.ACTION_LOGP][key][0] = np.asarray(value, dtype=np.asarray(old).dtype)
