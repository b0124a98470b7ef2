"""Scripted league opponents per env id, as `act(obs, rng) -> actions[B]` on numpy batches.

No Ray import: `ScriptedRLModule` (scripted_module.py) wraps these for RLlib, the tournament
calls them directly. Observation adapters accept what an RLlib module can receive:

* duel (`rlp/Duel-v0`): the raw egocentric `[B, 64]` observation, or the OpponentHistory
  connector's dict (transformer_lstm runs convert every agent's observation, scripted ones
  included); the raw observation is rebuilt as own features + newest opponent frame, which
  is exact for the duel's split `{self: [0, 32], opponent: [32, 64]}`.
* connect four (`pettingzoo/connect_four_v3`): `{observations, action_mask}`.
"""

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from rl_platform.connectors.history_window import HISTORY_KEY, SELF_KEY
from rl_platform.errors import UserError

DUEL_ENV = "rlp/Duel-v0"
CONNECT_FOUR_ENV = "pettingzoo/connect_four_v3"

ScriptedAct = Callable[[Any, np.random.Generator], np.ndarray]


def duel_raw_obs(obs: Any) -> np.ndarray:
    """`[B, 64]` duel observations from a raw batch or an OpponentHistory dict batch."""
    if isinstance(obs, Mapping) and HISTORY_KEY in obs:
        own = np.asarray(obs[SELF_KEY], dtype=np.float32)
        # The newest frame is the last slot of the window (oldest first, see history_window).
        newest = np.asarray(obs[HISTORY_KEY], dtype=np.float32)[..., -1, :]
        obs = np.concatenate([own, newest], axis=-1)
    array = np.asarray(obs, dtype=np.float32)
    return array.reshape(-1, array.shape[-1])


def _duel_agent(name: str) -> ScriptedAct:
    from rl_platform.envs.duel import get_scripted_agent

    agent = get_scripted_agent(name)
    return lambda obs, rng: agent(duel_raw_obs(obs), rng)


def _connect_four_agent(name: str) -> ScriptedAct:
    from rl_platform.teachers.connect_four import get_connect_four_agent

    return get_connect_four_agent(name)


_FACTORIES: dict[str, Callable[[str], ScriptedAct]] = {
    DUEL_ENV: _duel_agent,
    CONNECT_FOUR_ENV: _connect_four_agent,
}


def scripted_act(*, env_id: str, agent: str) -> ScriptedAct:
    """The scripted agent `agent` of env `env_id` (UserError for an unknown env or name)."""
    try:
        factory = _FACTORIES[env_id]
    except KeyError:
        raise UserError(
            f"league scripted agents exist for {sorted(_FACTORIES)}, not for env {env_id!r}"
        ) from None
    return factory(agent)


def check_scripted_names(*, env_id: str, names: list[str]) -> None:
    """Fail at config time (not inside an env runner) on unknown scripted agent names."""
    for name in names:
        scripted_act(env_id=env_id, agent=name)
