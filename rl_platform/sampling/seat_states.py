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
STATE_PREFIXES = (STATE_IN_PREFIX, STATE_OUT_PREFIX)


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


class ChunkPositions:
    """Which decisions' states the learner reads, so the runner stores only those.

    A seat's decisions in one game piece (a game within one sample call, rollout.py) become
    one episode chunk; the learner starts its `max_seq_len` sequences from the state before
    decision 0 and from the states after decisions `k * max_seq_len - 1`
    (connectors/chunk_states.py). Recording every state instead costs the whole state per
    decision: ~356 KiB for the streaming encoder at the reference size.
    """

    def __init__(self, *, num_games: int, num_seats: int, max_seq_len: int) -> None:
        self.max_seq_len = max_seq_len
        self.decisions = np.zeros((num_games, num_seats), np.int64)
        """Decisions of each seat in its current game piece."""

    def start_call(self, carried: np.ndarray | None) -> None:
        """A sample call starts new pieces; a carried open decision is decision 0 of its."""
        self.decisions[:] = 0
        if carried is not None and len(carried):
            self.decisions[carried[:, 0], carried[:, 1]] = 1

    def end_games(self, games: np.ndarray) -> None:
        self.decisions[games] = 0

    def take(self, games: np.ndarray, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows needing state_in, rows needing state_out) of these decisions; counts them."""
        index = self.decisions[games, seats]
        self.decisions[games, seats] += 1
        return index == 0, index % self.max_seq_len == self.max_seq_len - 1
