"""Learner piece at the end of the pipeline: hand each cloned module's labelled rows to the
learner's `LabelReplay` (`rl_platform.imitation.label_replay`), once per train batch.

It runs after GAE and `StudentAdvantages`, so the rows are exactly what the PPO minibatches
see (tensors on the learner's device; [B, T] chunks with their `state_in` for recurrent
modules). Only what a BC-only forward pass needs is kept: observations, recurrent state and
sequence lengths, teacher actions and the labelled-step mask.
"""

from collections.abc import Callable
from typing import Any

import torch
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.utils.annotations import override

from rl_platform.imitation.label_replay import map_nested
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION
from rl_platform.losses.bc import labelled_mask

_KEPT = (Columns.OBS, Columns.STATE_IN, Columns.SEQ_LENS, TEACHER_ACTION)

RecordLabels = Callable[[str, dict[str, Any], torch.Tensor], None]
"""(module id, columns, labelled mask) -> None."""


class LabelRecorder(ConnectorV2):
    """See the module docstring; `record` is the learner's `LabelReplay.add` per module."""

    def __init__(self, record: RecordLabels, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._record = record

    @override(ConnectorV2)
    def __call__(self, *, rl_module: Any, batch: dict[str, Any], **kwargs: Any) -> Any:
        for module_id, module_batch in batch.items():
            if not isinstance(module_batch, dict) or BC_MODE not in module_batch:
                continue
            bc_mode = torch.as_tensor(module_batch[BC_MODE])
            loss_mask = module_batch.get(Columns.LOSS_MASK)
            if loss_mask is not None:
                loss_mask = torch.as_tensor(loss_mask, device=bc_mode.device)
            columns = {
                key: map_nested(torch.as_tensor, module_batch[key])
                for key in _KEPT
                if key in module_batch
            }
            self._record(module_id, columns, labelled_mask(bc_mode=bc_mode, loss_mask=loss_mask))
        return batch
