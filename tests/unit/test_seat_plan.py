"""Per-game pairings of the array runner (rl_platform/sampling/seat_plan.py)."""

import numpy as np

from rl_platform.league.routing import RunnerPlan
from rl_platform.league.slots import OpponentChoice, SlotPlan
from rl_platform.sampling.seat_plan import NO_MEMBER, SeatPlan

MODULES = ("main", "opponent_0", "scripted_based")


def _plan(seed: int = 0) -> RunnerPlan:
    plan = SlotPlan(
        slots=("snap_1",),
        reload=(),
        opponents={
            "main": (
                OpponentChoice("based", "scripted_based", 0.75),
                OpponentChoice("snap_1", "opponent_0", 0.25),
            )
        },
    )
    return RunnerPlan(plan=plan, version=3, rng=np.random.default_rng(seed))


def test_without_a_plan_every_seat_plays_main() -> None:
    seats = SeatPlan.mirror(module_ids=MODULES, main="main", num_games=4, num_seats=2)
    seats.draw(np.arange(4), None, main="main")
    assert (seats.module_of == 0).all() and (seats.learner_seat == -1).all()
    assert seats.member == [NO_MEMBER] * 4


def test_draws_follow_the_plan_distribution_and_both_seats() -> None:
    games = 20_000
    seats = SeatPlan.mirror(module_ids=MODULES, main="main", num_games=games, num_seats=2)
    seats.draw(np.arange(games), _plan(), main="main")
    learner = seats.module_of[np.arange(games), seats.learner_seat]
    opponent = seats.module_of[np.arange(games), 1 - seats.learner_seat]
    assert (learner == 0).all() and (opponent != 0).all()
    assert abs((opponent == 2).mean() - 0.75) < 0.015
    assert abs(seats.learner_seat.mean() - 0.5) < 0.015
    members = np.asarray(seats.member)
    assert set(members[opponent == 1]) == {"snap_1"} and set(members[opponent == 2]) == {"based"}
    assert (seats.plan_version == 3).all()


def test_only_the_reset_games_are_redrawn() -> None:
    seats = SeatPlan.mirror(module_ids=MODULES, main="main", num_games=6, num_seats=2)
    seats.draw(np.arange(6), _plan(1), main="main")
    before = seats.module_of.copy()
    seats.draw(np.asarray([2]), None, main="main")
    assert (seats.module_of[2] == 0).all() and seats.learner_seat[2] == -1
    np.testing.assert_array_equal(np.delete(seats.module_of, 2, 0), np.delete(before, 2, 0))
