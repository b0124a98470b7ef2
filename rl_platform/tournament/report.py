"""What a round robin returns, whichever way its games were played."""

from dataclasses import dataclass

from rl_platform.league.leaderboard import MatchupMatrix
from rl_platform.league.results import Outcome

GameResult = tuple[str, str, Outcome]
"""(first seat's member id, second seat's member id, outcome from the first seat's side)."""


@dataclass(frozen=True)
class TournamentReport:
    results: list[GameResult]
    matrix: MatchupMatrix
