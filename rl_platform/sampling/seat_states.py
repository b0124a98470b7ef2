"""Recurrent state per seat of N games for the array env runner (torch, no Ray).

Recurrent modules (LSTM, transformer_lstm) carry `{key: [C]}` states from step to step. The
runner keeps them as torch tensors on the device its modules act on (the GPU with
`resources.acting_device: cuda`), one row per seat, flat: row `game * P + seat`, plus one
spare row at the end that padded batches write into (`trash`), so a captured CUDA graph can
act for a fixed number of rows. Each module step reads the rows of the seats it plays,
writes their new states back, and keeps the state it started from (`last_in`: the learner's
`state_in` of a decision, and of a transition carried into the next call). A game's reset
restarts its rows from the initial state, as RLlib's `AddStatesFromEpisodesToBatch` does on
env runners for an episode's first step. Every module of a league shares one architecture
(learners and opponent slots copy `main`), so one state layout serves all of them;
parameter-free scripted modules need none. Only rows the learner reads leave the device
(`read`).
"""

from collections.abc import Mapping

import numpy as np
import torch

STATE_IN_PREFIX = "state_in/"
STATE_OUT_PREFIX = "state_out/"
STATE_PREFIXES = (STATE_IN_PREFIX, STATE_OUT_PREFIX)


def flat_rows(games: np.ndarray, seats: np.ndarray, *, num_seats: int) -> np.ndarray:
    """Row of each (game, seat) in the flat `[N * P + 1, ...]` buffers."""
    return np.asarray(games, np.int64) * num_seats + np.asarray(seats, np.int64)


class SeatStates:
    """Flat `[N * P + 1, ...]` state tensors per key, starting from `initial` (docstring)."""

    def __init__(
        self,
        initial: Mapping[str, np.ndarray],
        *,
        num_games: int,
        num_seats: int,
        device: torch.device | str = "cpu",
    ) -> None:
        self.num_seats = num_seats
        self.trash = num_games * num_seats
        self.initial = {
            k: torch.as_tensor(np.asarray(v, np.float32), device=device) for k, v in initial.items()
        }
        rows = self.trash + 1
        self.values = {k: v.expand(rows, *v.shape).clone() for k, v in self.initial.items()}
        self.last_in = {k: v.clone() for k, v in self.values.items()}

    def step(self, index: torch.Tensor, state_in: Mapping[str, torch.Tensor], state_out) -> None:
        """Rows `index` acted from `state_in` to `state_out` (capturable: no host sync)."""
        for key, value in state_out.items():
            self.last_in[key].index_copy_(0, index, state_in[key])
            self.values[key].index_copy_(0, index, value.to(self.values[key].dtype))

    def snapshot(self) -> dict[str, torch.Tensor]:
        """A copy of every seat's current state, `[N * P, ...]` (the spare row left out), on
        the device it lives on: the start of the array learner's sequences."""
        return {k: v[: self.trash].clone() for k, v in self.values.items()}

    def gather(self, index: torch.Tensor) -> dict[str, torch.Tensor]:
        return {k: v.index_select(0, index) for k, v in self.values.items()}

    def restart(self, games: np.ndarray) -> None:
        """Every seat of `games` back to the initial state (their games reset)."""
        rows = flat_rows(
            np.repeat(games, self.num_seats),
            np.tile(np.arange(self.num_seats), len(games)),
            num_seats=self.num_seats,
        )
        index = torch.as_tensor(rows, device=self._device)
        for key, value in self.values.items():
            value.index_copy_(0, index, self.initial[key].expand(len(rows), *value.shape[1:]))

    def read(self, rows: np.ndarray, *, last_in: bool = False) -> dict[str, np.ndarray]:
        """Numpy copies of rows `rows` of the current states (or of `last_in`)."""
        source = self.last_in if last_in else self.values
        index = torch.as_tensor(np.asarray(rows, np.int64), device=self._device)
        return {k: v.index_select(0, index).cpu().numpy() for k, v in source.items()}

    def open_decisions(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """`state_in/<key>` and `state_out/<key>` of open decisions (a turn-based seat waiting
        for its next observation) at flat `rows`: the seat's last state_in, and its current
        state (it has not acted since, and its game has not restarted)."""
        state_in = {f"{STATE_IN_PREFIX}{k}": v for k, v in self.read(rows, last_in=True).items()}
        return state_in | {f"{STATE_OUT_PREFIX}{k}": v for k, v in self.read(rows).items()}

    @property
    def _device(self) -> torch.device:
        return next(iter(self.values.values())).device


class ChunkPositions:
    """Which decisions' states the learner reads, so the runner stores only those.

    A seat's decisions in one game piece (a game within one sample call, rollout.py) become
    one episode chunk; the learner starts its `max_seq_len` sequences from the state before
    decision 0 and from the states after decisions `k * max_seq_len - 1`
    (connectors/chunk_states.py), the chunk's last decision included: RLlib's bootstrap step
    after it starts a sequence when the chunk's length is a multiple of `max_seq_len`.
    Recording every state instead costs the whole state per decision: ~356 KiB for the
    streaming encoder at the reference size.
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


class StateRecords:
    """The states one sample call recorded for the learner, kept as they came.

    Each record call stores one block `{key: [n, ...]}` (the rows `ChunkPositions` picked at
    one step) and where each (kind, row, game, seat) lies in it; `take` gathers rows into one
    table. Rollout-sized arrays `[T + 1, N, P, ...]` per state key would cost ~3 GB of address
    space at the reference size and a page fault per touched row.
    """

    def __init__(self) -> None:
        self._blocks: list[dict[str, np.ndarray]] = []
        self._where: dict[tuple[str, int, int, int], tuple[int, int]] = {}

    def __bool__(self) -> bool:
        return bool(self._blocks)

    def add(
        self,
        kind: str,
        row: int,
        index: tuple[np.ndarray, np.ndarray],
        state: Mapping[str, np.ndarray],
    ) -> None:
        """`state` rows of seats `index` (games, seats) at `row`; `kind` is STATE_IN_PREFIX or
        STATE_OUT_PREFIX."""
        block = len(self._blocks)
        self._blocks.append(dict(state))
        for i, (game, seat) in enumerate(zip(*index, strict=True)):
            self._where[(kind, row, int(game), int(seat))] = (block, i)

    def record(
        self,
        states: SeatStates,
        row: int,
        games: np.ndarray,
        seats: np.ndarray,
        *,
        keep_in: np.ndarray,
        keep_out: np.ndarray,
    ) -> None:
        """Copy from the acting device the state_in (`last_in`) of the decisions `keep_in`
        and the state_out of `keep_out` marks, of seats (games, seats) that acted at `row`."""
        rows = flat_rows(games, seats, num_seats=states.num_seats)
        for kind, keep, last_in in (
            (STATE_IN_PREFIX, keep_in, True),
            (STATE_OUT_PREFIX, keep_out, False),
        ):
            if keep.any():
                self.add(
                    kind, row, (games[keep], seats[keep]), states.read(rows[keep], last_in=last_in)
                )

    def take(self, refs: list[tuple[str, int, int, int]]) -> dict[str, np.ndarray]:
        """A table `{key: [len(refs), ...]}` of the recorded rows `refs`, in order."""
        places = [self._where[ref] for ref in refs]
        keys = self._blocks[places[0][0]].keys()
        return {k: np.stack([self._blocks[b][k][i] for b, i in places]) for k in keys}
