"""Leaderboard ordering, round-robin schedules and matchup matrices."""

from collections import Counter

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.league.leaderboard import leaderboard, matchup_matrix, tournament_schedule
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.results import Outcome, ResultBook


def test_leaderboard_sorted_by_ordinal_with_win_rate_vs_main() -> None:
    members = [
        Member(id="main", kind=MemberKind.MAIN, mu=30.0, sigma=2.0),  # ordinal 24
        Member(id="lucky", kind=MemberKind.SNAPSHOT, mu=35.0, sigma=5.0),  # ordinal 20
        Member(id="based", kind=MemberKind.SCRIPTED, mu=26.0, sigma=0.5),  # ordinal 24.5
    ]
    book = ResultBook(window=10)
    book.record("main", "lucky", outcome=Outcome.WIN)
    book.record("main", "lucky", outcome=Outcome.DRAW)
    book.record("main", "lucky", outcome=Outcome.LOSS)
    book.record("main", "lucky", outcome=Outcome.LOSS)
    rows = leaderboard(members, results=book)
    assert [(r.rank, r.id) for r in rows] == [(1, "based"), (2, "main"), (3, "lucky")]
    lucky = rows[2]
    assert lucky.win_rate_vs_main == pytest.approx((2 + 0.5) / 4)
    assert lucky.games_vs_main == 4
    assert rows[0].win_rate_vs_main is None and rows[1].win_rate_vs_main is None


def test_tournament_schedule_is_a_balanced_round_robin() -> None:
    schedule = tournament_schedule(["a", "b", "c"], 4)
    assert len(schedule) == 3 * 4
    pairs = Counter(frozenset(g) for g in schedule)
    assert set(pairs.values()) == {4}
    seats = Counter(first for first, _ in schedule)
    assert seats == {"a": 4, "b": 4, "c": 4}
    with pytest.raises(UserError):
        tournament_schedule(["a"], 1)
    with pytest.raises(UserError):
        tournament_schedule(["a", "b"], 0)


def test_matchup_matrix_counts_both_seats() -> None:
    results = [("a", "b", "win"), ("b", "a", "loss"), ("a", "b", "draw"), ("c", "a", "win")]
    matrix = matchup_matrix(["a", "b", "c"], results)
    assert matrix.wins.tolist() == [[0, 2, 0], [0, 0, 0], [1, 0, 0]]
    assert matrix.games[0, 1] == matrix.games[1, 0] == 3
    rates = matrix.win_rate()
    assert rates[0, 1] == pytest.approx(2.5 / 3)
    assert rates[1, 0] == pytest.approx(0.5 / 3)
    assert np.isnan(rates[1, 2])
    assert matrix.to_dict()["ids"] == ["a", "b", "c"]
    with pytest.raises(UserError, match="outside"):
        matchup_matrix(["a"], [("a", "z", "win")])


def test_a_windows_draw_rate_splits_its_score_into_wins_and_draws() -> None:
    book = ResultBook(window=4)
    assert book.draw_rate("main", "zoner") is None
    for outcome in (Outcome.LOSS, Outcome.DRAW, Outcome.DRAW, Outcome.WIN, Outcome.DRAW):
        book.record("main", "zoner", outcome=outcome)
    book.record("zoner", "main", outcome=Outcome.LOSS)  # main's win from the other seat
    # The window holds main's last 4 games as main plus the 1 as zoner: D D W D and W.
    assert book.draw_rate("main", "zoner") == pytest.approx(3 / 5)
    score = book.win_prob("main", "zoner")
    assert score == pytest.approx((2 + 3 * 0.5) / 5)
    assert score - book.draw_rate("main", "zoner") / 2 == pytest.approx(2 / 5)  # wins only
