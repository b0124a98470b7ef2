"""Learner connector: each sequence chunk's STATE_IN read by index, not by copying every state.

RLlib 2.60's learner `AddStatesFromEpisodesToBatch` builds a chunk's STATE_IN as
`np.concatenate([[lookback], state_outs[:-1]])[::max_seq_len]`: it copies *every* stored
STATE_OUT of an episode and keeps the copy alive through the strided view it adds to the
batch. That is harmless for an LSTM's few KiB, but the streaming encoder's key/value cache is
~356 KiB per step at the reference size (docs/modules.md), so a 4,096-step batch copied
~1.4 GB per pass. This piece computes the same STATE_IN rows by index (the lookback, then the
STATE_OUT of every `max_seq_len`-th step) and adds them under STATE_IN, after which RLlib's
piece leaves the batch alone (it returns early when STATE_IN is present). Values are identical
(tests/integration/test_chunk_states.py), and the episodes may store only those rows: the
array env runner does (rl_platform/sampling/rollout.py).
"""

import math
from typing import Any

import numpy as np
import tree
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.numpy import convert_to_numpy
from ray.rllib.utils.typing import EpisodeType

from rl_platform.connectors.state_lookback import module_for

STATE_REF = "state_ref"
"""Episode column of the array runner's chunks: per STATE_OUT position (lookback first), the
row of the chunk's state table that holds it, -1 where no state is kept."""
CHUNK_STATES = "chunk_states"
"""`episode.custom_data` key of that table, `{state key: [M, ...]}`: the few states a chunk's
sequences start from travel once, beside the episode, not as a per-step column that RLlib's
learner pieces copy (`AddOneTsToEpisodesAndTruncate` appends to every column)."""


class MissingChunkStateError(LookupError):
    """A sequence starts from a state its chunk's table does not hold (`STATE_REF` -1)."""


def chunk_start_indices(length: int, max_seq_len: int) -> list[int]:
    """Indices of the STATE_OUTs that start chunks 1.. of an episode of `length` steps (the
    state after step `k * max_seq_len - 1` starts chunk k; chunk 0 starts from the lookback)."""
    return list(range(max_seq_len - 1, length - 1, max_seq_len))


class ChunkStatesToBatch(ConnectorV2):
    """See the module docstring. Numpy episodes only (learner side); others are left to RLlib."""

    def __call__(
        self,
        *,
        rl_module: RLModule,
        batch: dict[str, Any],
        episodes: list[EpisodeType],
        explore: bool | None = None,
        shared_data: dict | None = None,
        **kwargs: Any,
    ) -> Any:
        if rl_module is None or not rl_module.is_stateful() or Columns.STATE_IN in batch:
            return batch
        if Columns.NEXT_OBS in batch:  # off-policy batches also need NEXT_STATE_IN: RLlib's
            return batch
        # Every agent's episode, as RLlib's learner piece reads them: the default iterator
        # skips agents that did not step last (the waiting seat of a turn-based game).
        sa_episodes = list(
            self.single_agent_episode_iterator(episodes, agents_that_stepped_only=False)
        )
        if not all(e.is_numpy for e in sa_episodes):
            return batch
        initial: dict[Any, Any] = {}  # per module: get_initial_state() copies from the device
        for sa_episode in sa_episodes:
            module = module_for(rl_module, sa_episode.module_id)
            if not module.is_stateful():
                continue
            max_seq_len = int(module.model_config["max_seq_len"])
            if sa_episode.module_id not in initial:
                initial[sa_episode.module_id] = convert_to_numpy(module.get_initial_state())
            self.add_n_batch_items(
                batch=batch,
                column=Columns.STATE_IN,
                items_to_add=_chunk_states(sa_episode, initial[sa_episode.module_id], max_seq_len),
                num_items=math.ceil(len(sa_episode) / max_seq_len),
                single_agent_episode=sa_episode,
            )
        return batch


def _chunk_states(sa_episode: Any, initial: Any, max_seq_len: int) -> Any:
    """`[ceil(len / max_seq_len), ...]` STATE_INs, as RLlib's piece computes them; `initial`:
    the module's initial state (numpy)."""
    if STATE_REF in sa_episode.extra_model_outputs:
        return _referenced_chunk_states(sa_episode, initial, max_seq_len)
    has_states = Columns.STATE_OUT in sa_episode.extra_model_outputs
    if sa_episode.t_started == 0 or not has_states:
        first = initial
    else:
        first = sa_episode.get_extra_model_outputs(
            key=Columns.STATE_OUT, indices=-1, neg_index_as_lookback=True
        )
    indices = chunk_start_indices(len(sa_episode), max_seq_len)
    if not has_states or not indices:  # no states stored: every chunk starts from `first`
        count = math.ceil(len(sa_episode) / max_seq_len)
        return tree.map_structure(lambda s: np.repeat(np.asarray(s)[None], count, axis=0), first)
    later = sa_episode.get_extra_model_outputs(key=Columns.STATE_OUT, indices=indices)
    return tree.map_structure(
        lambda f, rest: np.concatenate([np.asarray(f)[None], rest]), first, later
    )


def _referenced_chunk_states(sa_episode: Any, initial: Any, max_seq_len: int) -> Any:
    """The same rows, looked up in the chunk's state table (`STATE_REF`, `CHUNK_STATES`)."""
    table = sa_episode.custom_data[CHUNK_STATES]
    indices = chunk_start_indices(len(sa_episode), max_seq_len)
    refs = [int(sa_episode.get_extra_model_outputs(STATE_REF, -1, neg_index_as_lookback=True))]
    if indices:
        refs += [int(r) for r in sa_episode.get_extra_model_outputs(STATE_REF, indices)]
    rows = np.asarray(refs, np.int64)
    if (rows < 0).any():  # numpy would read -1 as the table's last row: a wrong state, silently
        missing = [i for i, r in zip([-1, *indices], refs, strict=True) if r < 0]
        raise MissingChunkStateError(
            f"chunk {sa_episode.id_} ({len(sa_episode)} steps) has no state after step(s) "
            f"{missing}; its sequences start there (max_seq_len {max_seq_len})"
        )
    chunks = tree.map_structure(lambda values: np.asarray(values)[rows], table)
    if sa_episode.t_started == 0:  # as RLlib: an episode's start is the initial state
        chunks = tree.map_structure(_with_first, chunks, initial)
    return chunks


def _with_first(rows: np.ndarray, first: Any) -> np.ndarray:
    rows = rows.copy()
    rows[0] = first
    return rows
