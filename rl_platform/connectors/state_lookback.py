"""Learner connector that gives every episode chunk a STATE_OUT lookback (ray-project/ray#60205).

RLlib 2.60's learner `AddStatesFromEpisodesToBatch` takes the STATE_IN of a chunk that does
not start an episode (`t_started > 0`) from the last STATE_OUT of the previous chunk, read
from the chunk's lookback buffer. `MultiAgentEpisode.cut(len_lookback_buffer=...)` measures
that lookback in *env* steps (`episode_lookback_horizon`, default 1), so in a turn-based game
an agent whose last action lies 2+ env steps before the cut gets an empty STATE_OUT lookback:
nested (LSTM h/c) states then crash with `IndexError: index N is out of bounds for axis 0
with size N` in `InfiniteLookbackBuffer._get_int_index`, plain-array states silently take
the chunk's *last* STATE_OUT as its first STATE_IN. The env runner is unaffected: it computes
the first action's input before cutting (`MultiAgentEnvRunner._cached_to_module`).

Two parts, both wired by rl_platform/rllib/config.py:
- `lookback_horizon_for_turns(players)`: with P players taking turns, an agent's last
  STATE_OUT is at most P env steps back, or P + 1 when its action still waits for its next
  observation at the cut (`cut()` keeps such "hanging" actions, but not the state before
  them). A horizon of P + 1 keeps every agent's state, so learner and actor agree exactly.
- `FillStateLookback`: for chunks whose STATE_OUT lookback is still empty (irregular turn
  orders, hierarchical agents idle for many steps), inserts the module's initial state as the
  lookback entry before RLlib's piece reads it. This is the fallback of ray-project/ray
  PR #64081; the actor did use the carried state, so such a chunk starts from a different
  state on the learner (logged once).
"""

from typing import Any

import numpy as np
import tree
from loguru import logger
from ray.rllib.connectors.connector_v2 import ConnectorV2
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.utils.infinite_lookback_buffer import InfiniteLookbackBuffer
from ray.rllib.utils.numpy import convert_to_numpy
from ray.rllib.utils.typing import EpisodeType


def lookback_horizon_for_turns(players: int) -> int:
    """`episode_lookback_horizon` keeping each of `players` turn-taking agents' last state."""
    if players < 1:
        raise ValueError(f"players must be >= 1, got {players}")
    return players + 1


def module_for(rl_module: RLModule, module_id: Any) -> RLModule:
    # Same lookup as RLlib's AddStatesFromEpisodesToBatch (learner branch).
    if module_id is not None:
        return rl_module[module_id]
    return rl_module[DEFAULT_MODULE_ID] if isinstance(rl_module, MultiRLModule) else rl_module


def needs_state_lookback(sa_episode: Any) -> bool:
    """A continuation chunk with STATE_OUTs but nothing to look back to."""
    buffer = sa_episode.extra_model_outputs.get(Columns.STATE_OUT)
    return sa_episode.t_started > 0 and buffer is not None and buffer.lookback == 0


def prepend_state(buffer: InfiniteLookbackBuffer, state: Any) -> None:
    """Insert `state` as the single lookback item of `buffer` (list or finalized numpy)."""
    if buffer.finalized:
        buffer.data = tree.map_structure(
            lambda s, d: np.concatenate([np.asarray(s, d.dtype)[None], d], axis=0),
            state,
            buffer.data,
        )
    else:
        buffer.data = [state, *buffer.data]
    buffer.lookback = 1


class FillStateLookback(ConnectorV2):
    """Learner piece: initial state as STATE_OUT lookback where a chunk has none (docstring)."""

    def __init__(
        self,
        input_observation_space: Any = None,
        input_action_space: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(input_observation_space, input_action_space, **kwargs)
        self.filled = 0  # chunks repaired so far (diagnostics, tests)

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
        if rl_module is None or not rl_module.is_stateful():
            return batch
        for sa_episode in self.single_agent_episode_iterator(
            episodes, agents_that_stepped_only=False
        ):
            module = module_for(rl_module, sa_episode.module_id)
            if not module.is_stateful() or not needs_state_lookback(sa_episode):
                continue
            initial = convert_to_numpy(module.get_initial_state())
            prepend_state(sa_episode.extra_model_outputs[Columns.STATE_OUT], initial)
            if self.filled == 0:
                logger.warning(
                    "agent {} (module {}): episode chunk starts without its previous state "
                    "(ray-project/ray#60205); the learner starts it from the initial state. "
                    "Raise episode_lookback_horizon to keep the actor's state.",
                    sa_episode.agent_id,
                    sa_episode.module_id,
                )
            self.filled += 1
        return batch
