"""Preallocated time-major rollout arrays and their cut into per-seat trajectories (no Ray).

While sampling, every step writes whole `[N, P]` rows: the observation each seat acted on,
its action and model outputs, the rewards of the step, and which games ended. Only at the
end of a sample call are the rows of recorded seats cut into `Trajectory`s, one per seat
and game piece, which the RLlib adapter turns into episodes in bulk.

Transitions. A seat's transition starts at a step where it acted (a "decision") and closes
at its next decision or at its game's end. Its reward is the sum of the seat's rewards
from its decision step up to the step before its next decision (turn-based games pay the
loser at the winner's move). Row 0 of the arrays is reserved for transitions carried over
from the previous sample call: a seat that acted but has no next observation yet (the other
seat of a turn-based game moves next) keeps its open transition, with the reward collected
so far, in row 0 of the next call.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rl_platform.envs.vector_game import Observations, put_rows, take_rows
from rl_platform.losses.opponent_action import NO_OPPONENT_ACTION, OPPONENT_ACTIONS
from rl_platform.sampling.seat_states import (
    STATE_IN_PREFIX,
    STATE_OUT_PREFIX,
    STATE_PREFIXES,
    StateRecords,
)


def _allocate(template: Observations, rows: int) -> Observations:
    """Zero arrays `[rows, *template.shape]` for an array or a dict of arrays."""
    if isinstance(template, Mapping):
        return {k: np.zeros((rows, *v.shape), v.dtype) for k, v in template.items()}
    return np.zeros((rows, *template.shape), template.dtype)


@dataclass
class Trajectory:
    """Closed transitions of one seat in one game piece (K transitions, K + 1 observations)."""

    game: int
    seat: int
    module: int
    episode_uid: int
    t_started: int
    observations: Observations
    actions: np.ndarray
    rewards: np.ndarray
    extras: dict[str, np.ndarray]
    terminated: bool
    truncated: bool
    state_table: dict[str, np.ndarray] = field(default_factory=dict)
    """Recurrent modules: the states the learner reads, `{key: [M, ...]}`: row 0 the state
    before the first decision, then the state after every `state_stride`-th decision (the
    last one included: it starts the bootstrap step's sequence when K is a multiple)."""
    state_refs: np.ndarray | None = None
    """`[K + 1]` row of `state_table` for each STATE_OUT position (index 0: the lookback, the
    state before decision 0; index j: the state after decision j - 1), -1 where the learner
    never reads one; see `_chunk_states`."""

    def __len__(self) -> int:
        return len(self.actions)


@dataclass
class RolloutArrays:
    """`[T + 1, N, P, ...]` arrays for one sample call (row 0: carried-over transitions)."""

    steps: int
    obs: Observations
    final_obs: Observations
    actions: np.ndarray
    decided: np.ndarray
    rewards: np.ndarray
    module: np.ndarray
    ended: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    episode_uid: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    state_stride: int = 0
    """Recurrent modules' `max_seq_len`: states are stored at chunk starts only."""
    states: StateRecords = field(default_factory=StateRecords)
    """Recorded `state_in/...` and `state_out/...` rows (`StateRecords`)."""

    @classmethod
    def allocate(cls, *, steps: int, obs: Observations, num_games: int) -> "RolloutArrays":
        """Arrays for `steps` steps of games whose current observations are `obs` [N, P]."""
        rows = steps + 1
        seats = (rows, *next(iter(_leaves(obs))).shape[:2])
        games = (rows, num_games)
        return cls(
            steps=steps,
            obs=_allocate(obs, rows),
            final_obs=_allocate(obs, rows),
            actions=np.zeros(seats, np.int64),
            decided=np.zeros(seats, bool),
            rewards=np.zeros(seats, np.float32),
            module=np.zeros(seats, np.int64),
            ended=np.zeros(games, bool),
            terminated=np.zeros(games, bool),
            truncated=np.zeros(games, bool),
            episode_uid=np.zeros(games, np.int64),
        )

    def record_extra(self, name: str, row: int, index: tuple, values: np.ndarray) -> None:
        """Store a per-decision model output (allocated on first use with its dtype)."""
        array = self.extras.get(name)
        if array is None:
            shape = (*self.decided.shape, *values.shape[1:])
            array = self.extras[name] = np.zeros(shape, values.dtype)
        array[(row, *index)] = values


def record_opponent_actions(
    arrays: RolloutArrays, row: int, actions: np.ndarray, acting: np.ndarray
) -> None:
    """For each seat that decided at `row` in a two-seat game, the action the other seat
    chose at the same step (`NO_OPPONENT_ACTION` where it did not act): the labels of the
    policy-inference loss (rl_platform/losses/opponent_action.py). `actions`, `acting`:
    [N, 2], every seat's action and whether it acted."""
    games, seats = np.nonzero(arrays.decided[row])
    other = 1 - seats
    labels = np.where(acting[games, other], actions[games, other], NO_OPPONENT_ACTION)
    arrays.record_extra(OPPONENT_ACTIONS, row, (games, seats), labels.astype(np.int64))


def _leaves(obs: Observations) -> list[np.ndarray]:
    return list(obs.values()) if isinstance(obs, Mapping) else [obs]


@dataclass
class Carry:
    """Open transitions handed from one sample call to the next (see the module docstring)."""

    seats: np.ndarray  # [K, 2] (game, seat)
    obs: Observations
    actions: np.ndarray
    rewards: np.ndarray
    module: np.ndarray
    extras: dict[str, np.ndarray]


def carry_into(arrays: RolloutArrays, carry: Carry | None) -> None:
    """Write carried-over open transitions into row 0."""
    if carry is None or len(carry.seats) == 0:
        return
    g, p = carry.seats[:, 0], carry.seats[:, 1]
    put_rows(arrays.obs, (0, g, p), carry.obs)
    arrays.actions[0, g, p] = carry.actions
    arrays.rewards[0, g, p] = carry.rewards
    arrays.module[0, g, p] = carry.module
    arrays.decided[0, g, p] = True
    for name, values in carry.extras.items():
        if not name.startswith(STATE_PREFIXES):
            arrays.record_extra(name, 0, (g, p), values)
    for prefix in STATE_PREFIXES:
        state = {n.removeprefix(prefix): v for n, v in carry.extras.items() if n.startswith(prefix)}
        if state:
            arrays.states.add(prefix, 0, (g, p), state)


def carry_from(
    arrays: RolloutArrays, pending: list[tuple[int, int, int, float]], states: dict
) -> Carry | None:
    """What a sample call leaves open for the next: the `pending` decisions (game, seat,
    row, reward so far) whose next observation has not come yet, with their `states`."""
    if not pending:
        return None
    games = np.asarray([p[0] for p in pending])
    seats = np.asarray([p[1] for p in pending])
    rows = np.asarray([p[2] for p in pending])
    return Carry(
        seats=np.stack([games, seats], axis=1),
        obs=take_rows(arrays.obs, (rows, games, seats)),
        actions=arrays.actions[rows, games, seats],
        rewards=np.asarray([p[3] for p in pending], np.float32),
        module=arrays.module[rows, games, seats],
        extras={name: values[rows, games, seats] for name, values in arrays.extras.items()}
        | states,
    )


@dataclass
class SeatCut:
    """Where one seat's rows end up: trajectories plus an optional open transition."""

    trajectories: list[Trajectory]
    pending_row: int | None
    pending_reward: float
    t_next: int
    """Closed transitions of the seat in its unfinished game after this call."""


def cut_seat(
    arrays: RolloutArrays,
    *,
    game: int,
    seat: int,
    acting_now: bool,
    current_obs: Observations,
    t_started: int,
) -> SeatCut:
    """Cut one seat's decisions into trajectories, one per game piece (module docstring).

    `acting_now`: the seat acts on the observation after the last step (its open decision
    is `current_obs[game, seat]`); otherwise its last decision of an unfinished game stays
    open. `t_started`: closed transitions of this seat in its game before this call.
    """
    decisions = np.flatnonzero(arrays.decided[:, game, seat])
    ends = np.flatnonzero(arrays.ended[:, game])
    out: list[Trajectory] = []
    start = 0
    for end in [*ends.tolist(), None]:
        stop = arrays.steps + 1 if end is None else end + 1
        piece = decisions[(decisions >= start) & (decisions < stop)]
        start = stop
        if len(piece) == 0:
            t_started = 0 if end is not None else t_started
            continue
        if end is not None:
            out.append(_closed(arrays, game, seat, piece, end, t_started))
            t_started = 0
            continue
        if acting_now:
            final = take_rows(current_obs, (game, seat))
            out.append(_open(arrays, game, seat, piece, final, t_started))
            return SeatCut(out, None, 0.0, t_started + len(piece))
        pending = int(piece[-1])
        reward = float(arrays.rewards[pending:, game, seat].sum())
        if len(piece) > 1:
            final = take_rows(arrays.obs, (pending, game, seat))
            out.append(_open(arrays, game, seat, piece[:-1], final, t_started, until=pending))
        return SeatCut(out, pending, reward, t_started + len(piece) - 1)
    return SeatCut(out, None, 0.0, t_started)


def _transition_rewards(arrays: RolloutArrays, game: int, seat: int, piece, stop: int):
    """Sum of the seat's rewards from each decision up to the next one (or `stop`)."""
    series = arrays.rewards[:stop, game, seat]
    return np.add.reduceat(series, piece).astype(np.float32) if len(piece) else series[:0]


def _trajectory(arrays, game, seat, piece, rewards, final, t_started, *, term, trunc):
    obs_rows = take_rows(arrays.obs, (piece, game, seat))
    observations = _append(obs_rows, final)
    first = int(piece[0])
    table, refs = _chunk_states(arrays, game, seat, piece)
    return Trajectory(
        game=game,
        seat=seat,
        module=int(arrays.module[first, game, seat]),
        episode_uid=int(arrays.episode_uid[first, game]),
        t_started=t_started,
        observations=observations,
        actions=arrays.actions[piece, game, seat],
        rewards=rewards,
        extras={name: values[piece, game, seat] for name, values in arrays.extras.items()},
        terminated=term,
        truncated=trunc,
        state_table=table,
        state_refs=refs,
    )


def _chunk_states(arrays: RolloutArrays, game: int, seat: int, piece) -> tuple[dict, Any]:
    """(state table, state refs) of one chunk (`Trajectory.state_table`, `state_refs`): the
    state before decision 0, then the state after decisions `k * stride - 1`, as recorded by
    `seat_states.ChunkPositions`; ({}, None) for modules without states.

    `k * stride` runs up to the chunk's length K inclusive: RLlib's learner appends one
    bootstrap step to every chunk (`AddOneTsToEpisodesAndTruncate`), so when K is a multiple
    of the stride that step starts a sequence of its own, from the state after the last
    decision (the value the critic bootstraps from with `critic_input: memory`)."""
    if not arrays.states:
        return {}, None
    starts = np.arange(arrays.state_stride, len(piece) + 1, arrays.state_stride or 1)
    refs = [(STATE_IN_PREFIX, int(piece[0]), game, seat)]
    refs += [(STATE_OUT_PREFIX, int(piece[k - 1]), game, seat) for k in starts]
    positions = np.full(len(piece) + 1, -1, np.int64)
    positions[0] = 0
    positions[starts] = np.arange(1, len(starts) + 1)
    return arrays.states.take(refs), positions


def _closed(arrays, game, seat, piece, end, t_started) -> Trajectory:
    rewards = _transition_rewards(arrays, game, seat, piece, end + 1)
    final = take_rows(arrays.final_obs, (end, game, seat))
    term, trunc = bool(arrays.terminated[end, game]), bool(arrays.truncated[end, game])
    return _trajectory(arrays, game, seat, piece, rewards, final, t_started, term=term, trunc=trunc)


def _open(arrays, game, seat, piece, final, t_started, *, until: int | None = None):
    stop = arrays.steps + 1 if until is None else until
    rewards = _transition_rewards(arrays, game, seat, piece, stop)
    return _trajectory(
        arrays, game, seat, piece, rewards, final, t_started, term=False, trunc=False
    )


def _append(rows: Observations, last: Any) -> Observations:
    if isinstance(rows, Mapping):
        return {k: np.concatenate([v, np.asarray(last[k])[None]]) for k, v in rows.items()}
    return np.concatenate([rows, np.asarray(last)[None]])
