"""Recurrent state per seat of N games for the array env runner (no Ray).

Recurrent modules (LSTM, transformer_lstm) carry `{key: [C]}` states from step to step. The
runner keeps them as `[N, P, C]` arrays, hands each module the rows of the seats it plays,
writes the new states back, and restarts a game's rows from the initial state at its reset,
as RLlib's `AddStatesFromEpisodesToBatch` does on env runners for an episode's first step.
Every module of a league shares one architecture (learners and opponent slots copy `main`),
so one state layout serves all of them; parameter-free scripted modules need none.
"""

from collections.abc import Mapping

import numpy as np

STATE_IN_PREFIX = "state_in/"
STATE_OUT_PREFIX = "state_out/"


class SeatStates:
    """`[N, P, ...]` state arrays per state key, starting from `initial`."""

    def __init__(self, initial: Mapping[str, np.ndarray], *, num_games: int, num_seats: int):
        self.initial = {k: np.asarray(v, np.float32) for k, v in initial.items()}
        self.values = {
            k: np.broadcast_to(v, (num_games, num_seats, *v.shape)).copy()
            for k, v in self.initial.items()
        }

    def rows(self, games: np.ndarray, seats: np.ndarray) -> dict[str, np.ndarray]:
        return {k: v[games, seats] for k, v in self.values.items()}

    def write(self, games: np.ndarray, seats: np.ndarray, state: Mapping[str, np.ndarray]) -> None:
        for key, value in state.items():
            self.values[key][games, seats] = value

    def restart(self, games: np.ndarray) -> None:
        for key, value in self.values.items():
            value[games] = self.initial[key]


def state_extras(state_in: Mapping[str, np.ndarray], state_out: Mapping[str, np.ndarray]):
    """Flat extra columns for the rollout arrays: `state_in/<key>`, `state_out/<key>`."""
    extras = {f"{STATE_IN_PREFIX}{k}": v for k, v in state_in.items()}
    return extras | {f"{STATE_OUT_PREFIX}{k}": v for k, v in state_out.items()}
