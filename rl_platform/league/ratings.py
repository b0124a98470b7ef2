"""openskill ratings for two-player games, updated after every finished game.

We use openskill's Plackett-Luce model (its default) with one player per team; a draw is a
tie in rank. Ranking uses the conservative `ordinal` mu - 3 sigma, so a barely-played member
with a lucky win does not jump above a well-measured one.
"""

from dataclasses import dataclass

from openskill.models import PlackettLuce

from rl_platform.league.members import DEFAULT_MU, DEFAULT_SIGMA, Member
from rl_platform.league.results import Outcome

# One model instance: it is stateless between `rate` calls.
_MODEL = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)


@dataclass(frozen=True)
class Rating:
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA

    @property
    def ordinal(self) -> float:
        return ordinal(self.mu, self.sigma)


def ordinal(mu: float, sigma: float, *, z: float = 3.0) -> float:
    """Conservative skill estimate (openskill's `ordinal`): mu - z * sigma."""
    return mu - z * sigma


def rate_game(first: Rating, second: Rating, *, outcome: Outcome) -> tuple[Rating, Rating]:
    """New ratings of (first, second) after a game; `outcome` is from `first`'s side."""
    ranks = {Outcome.WIN: [0, 1], Outcome.LOSS: [1, 0], Outcome.DRAW: [0, 0]}[outcome]
    a = _MODEL.rating(mu=first.mu, sigma=first.sigma)
    b = _MODEL.rating(mu=second.mu, sigma=second.sigma)
    (new_a,), (new_b,) = _MODEL.rate([[a], [b]], ranks=ranks)
    return Rating(new_a.mu, new_a.sigma), Rating(new_b.mu, new_b.sigma)


def with_game(member: Member, outcome: Outcome, rating: Rating) -> Member:
    """`member` after one more game: its record counts `outcome` and it holds `rating`."""
    return member.model_copy(
        update={
            "games": member.games + 1,
            "wins": member.wins + (outcome is Outcome.WIN),
            "draws": member.draws + (outcome is Outcome.DRAW),
            "losses": member.losses + (outcome is Outcome.LOSS),
            "mu": rating.mu,
            "sigma": rating.sigma,
        }
    )
