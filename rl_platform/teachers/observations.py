"""Observation adapters: what a scripted agent reads, from what an env or an RLModule hands it.

A scripted league member's `ScriptedRLModule` receives what RLlib's connectors made of the
observation; transformer_lstm runs convert every agent's observation with the OpponentHistory
connector, scripted ones included. The registry (registry.py) applies the adapter named in an
agent's entry before the agent acts.
"""

from collections.abc import Mapping
from typing import Any

import numpy as np

from rl_platform.base.observation_keys import HISTORY_KEY, SELF_KEY


def duel_raw_obs(obs: Any) -> np.ndarray:
    """`[B, 64]` duel observations from a raw batch or an OpponentHistory dict batch.

    The raw observation is rebuilt as own features + newest opponent frame, which is exact for
    the duel's split `{self: [0, 32], opponent: [32, 64]}`.
    """
    if isinstance(obs, Mapping) and HISTORY_KEY in obs:
        own = np.asarray(obs[SELF_KEY], dtype=np.float32)
        # The newest frame is the last slot of the window (oldest first, see history_window).
        newest = np.asarray(obs[HISTORY_KEY], dtype=np.float32)[..., -1, :]
        obs = np.concatenate([own, newest], axis=-1)
    array = np.asarray(obs, dtype=np.float32)
    return array.reshape(-1, array.shape[-1])
