"""openskill rating updates move in the right direction; ordinal is conservative."""

import pytest

from rl_platform.league.ratings import Rating, ordinal, rate_game
from rl_platform.league.results import Outcome


def test_winner_goes_up_loser_goes_down_and_both_get_surer() -> None:
    a, b = Rating(), Rating()
    new_a, new_b = rate_game(a, b, outcome=Outcome.WIN)
    assert new_a.mu > a.mu and new_b.mu < b.mu
    assert new_a.sigma < a.sigma and new_b.sigma < b.sigma
    lost_a, lost_b = rate_game(a, b, outcome=Outcome.LOSS)
    assert lost_a.mu == pytest.approx(new_b.mu) and lost_b.mu == pytest.approx(new_a.mu)


def test_draw_between_equals_keeps_means_and_pulls_unequal_together() -> None:
    even_a, even_b = rate_game(Rating(), Rating(), outcome=Outcome.DRAW)
    assert even_a.mu == pytest.approx(25.0) and even_b.mu == pytest.approx(25.0)
    strong, weak = Rating(mu=30.0, sigma=3.0), Rating(mu=20.0, sigma=3.0)
    new_strong, new_weak = rate_game(strong, weak, outcome=Outcome.DRAW)
    assert new_strong.mu < strong.mu and new_weak.mu > weak.mu


def test_upset_moves_more_than_expected_result() -> None:
    strong, weak = Rating(mu=30.0, sigma=4.0), Rating(mu=20.0, sigma=4.0)
    expected_gain = rate_game(strong, weak, outcome=Outcome.WIN)[0].mu - strong.mu
    upset_gain = rate_game(weak, strong, outcome=Outcome.WIN)[0].mu - weak.mu
    assert upset_gain > expected_gain > 0


def test_ordinal_is_mu_minus_three_sigma() -> None:
    assert ordinal(25.0, 25.0 / 3.0) == pytest.approx(0.0)
    assert Rating(mu=30.0, sigma=2.0).ordinal == pytest.approx(24.0)
