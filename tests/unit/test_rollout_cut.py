"""Cutting rollout rows into per-seat trajectories (rl_platform/sampling/rollout.py)."""

import numpy as np

from rl_platform.sampling.rollout import RolloutArrays, carry_into, cut_seat
from tests.unit.rollout_support import carry_of


def _arrays(steps: int, games: int = 1, seats: int = 2) -> RolloutArrays:
    obs = np.zeros((games, seats, 1), np.float32)
    arrays = RolloutArrays.allocate(steps=steps, obs=obs, num_games=games)
    # Observation value = 10 * row + seat, so every row is recognisable.
    for row in range(steps + 1):
        arrays.obs[row, :, :, 0] = 10 * row + np.arange(seats)
    return arrays


def test_simultaneous_game_cut_mid_game_keeps_every_step() -> None:
    arrays = _arrays(3)
    arrays.decided[1:, 0, :] = True
    arrays.rewards[1:, 0, 0] = [1.0, 2.0, 3.0]
    current = np.full((1, 2, 1), 99.0, np.float32)
    cut = cut_seat(arrays, game=0, seat=0, acting_now=True, current_obs=current, t_started=5)
    (traj,) = cut.trajectories
    assert traj.observations[:, 0].tolist() == [10, 20, 30, 99]
    assert traj.rewards.tolist() == [1.0, 2.0, 3.0]
    assert not traj.terminated and not traj.truncated
    assert traj.t_started == 5 and cut.t_next == 8 and cut.pending_row is None


def test_game_end_splits_pieces_and_uses_final_obs() -> None:
    arrays = _arrays(4)
    arrays.decided[1:, 0, 1] = True
    arrays.rewards[1:, 0, 1] = [1.0, 1.0, 5.0, 0.5]
    arrays.ended[2, 0] = True
    arrays.terminated[2, 0] = True
    arrays.final_obs[2, 0, 1, 0] = -7.0
    current = np.full((1, 2, 1), 99.0, np.float32)
    cut = cut_seat(arrays, game=0, seat=1, acting_now=True, current_obs=current, t_started=3)
    first, second = cut.trajectories
    assert first.observations[:, 0].tolist() == [11, 21, -7]
    assert first.rewards.tolist() == [1.0, 1.0] and first.terminated and first.t_started == 3
    assert second.observations[:, 0].tolist() == [31, 41, 99]
    assert second.rewards.tolist() == [5.0, 0.5] and not second.terminated
    assert second.t_started == 0 and cut.t_next == 2


def test_turn_based_rewards_span_until_the_next_own_move() -> None:
    # Seat 0 moves on rows 1 and 3, seat 1 on rows 2 and 4; the game ends at row 4 with
    # seat 1 winning: seat 0's -1 arrives on seat 1's move.
    arrays = _arrays(4)
    arrays.decided[[1, 3], 0, 0] = True
    arrays.decided[[2, 4], 0, 1] = True
    arrays.rewards[4, 0] = [-1.0, 1.0]
    arrays.ended[4, 0] = arrays.terminated[4, 0] = True
    current = np.zeros((1, 2, 1), np.float32)
    loser = cut_seat(arrays, game=0, seat=0, acting_now=True, current_obs=current, t_started=0)
    winner = cut_seat(arrays, game=0, seat=1, acting_now=False, current_obs=current, t_started=0)
    assert loser.trajectories[0].rewards.tolist() == [0.0, -1.0]
    assert winner.trajectories[0].rewards.tolist() == [0.0, 1.0]
    assert loser.trajectories[0].terminated and winner.trajectories[0].terminated


def test_open_move_is_carried_into_the_next_call() -> None:
    # Seat 0 moved last (row 3) and waits for seat 1: its move stays open.
    arrays = _arrays(3)
    arrays.decided[[1, 3], 0, 0] = True
    arrays.decided[2, 0, 1] = True
    arrays.actions[3, 0, 0] = 4
    arrays.rewards[3, 0, 0] = 0.25
    current = np.zeros((1, 2, 1), np.float32)
    cut = cut_seat(arrays, game=0, seat=0, acting_now=False, current_obs=current, t_started=0)
    (traj,) = cut.trajectories
    assert traj.observations[:, 0].tolist() == [10, 30]  # ends at the open move's observation
    assert cut.pending_row == 3 and cut.pending_reward == 0.25 and cut.t_next == 1

    nxt = _arrays(2)
    carry_into(nxt, carry_of(arrays, game=0, seat=0, row=3, reward=0.25))
    nxt.decided[2, 0, 0] = True
    nxt.rewards[1, 0, 0] = 1.0
    nxt.ended[1, 0] = nxt.terminated[1, 0] = True
    nxt.final_obs[1, 0, 0, 0] = -1.0
    cut2 = cut_seat(nxt, game=0, seat=0, acting_now=True, current_obs=current, t_started=1)
    first = cut2.trajectories[0]
    assert first.observations[:, 0].tolist() == [30, -1]  # the carried move's observation
    assert first.actions.tolist() == [4] and first.rewards.tolist() == [1.25]
    assert first.terminated and first.t_started == 1
