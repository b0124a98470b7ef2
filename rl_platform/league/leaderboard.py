"""Leaderboard rows, round-robin tournament schedules and matchup matrices."""

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.league.members import Member
from rl_platform.league.results import Outcome, ResultBook, as_outcome


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    id: str
    kind: str
    rating: float  # conservative ordinal mu - 3 sigma
    mu: float
    sigma: float
    games: int
    win_rate_vs_main: float | None  # this member's all-time score vs main (draw = 1/2)
    games_vs_main: int


def leaderboard(
    members: Sequence[Member], *, results: ResultBook, main_id: str = MAIN_MODULE_ID
) -> list[LeaderboardRow]:
    """Rows sorted by rating ordinal (best first; ties by id for a stable order)."""
    ordered = sorted(members, key=lambda m: (-m.ordinal, m.id))
    rows = []
    for rank, member in enumerate(ordered, start=1):
        wins, draws, losses = (
            (0, 0, 0) if member.id == main_id else results.totals(member.id, main_id)
        )
        n = wins + draws + losses
        rows.append(
            LeaderboardRow(
                rank=rank,
                id=member.id,
                kind=str(member.kind),
                rating=member.ordinal,
                mu=member.mu,
                sigma=member.sigma,
                games=member.games,
                win_rate_vs_main=(wins + 0.5 * draws) / n if n else None,
                games_vs_main=n,
            )
        )
    return rows


def tournament_schedule(members: Sequence[str], games: int) -> list[tuple[str, str]]:
    """Round robin: every unordered pair plays `games` games, seats alternating (first, second)."""
    if games < 1:
        raise UserError(f"tournament games per pair must be >= 1, got {games}")
    unique = list(dict.fromkeys(members))
    if len(unique) < 2:
        raise UserError(f"a tournament needs at least 2 distinct members, got {unique}")
    schedule = []
    for a, b in itertools.combinations(unique, 2):
        schedule += [(a, b) if g % 2 == 0 else (b, a) for g in range(games)]
    return schedule


@dataclass
class MatchupMatrix:
    """wins[i, j] = games member i won against member j (either seat); same for draws/games."""

    ids: list[str]
    wins: np.ndarray
    draws: np.ndarray
    games: np.ndarray

    def win_rate(self) -> np.ndarray:
        """Score of row vs column (draw = 1/2); NaN where the pair never played."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.games > 0, (self.wins + 0.5 * self.draws) / self.games, np.nan)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "wins": self.wins.tolist(),
            "draws": self.draws.tolist(),
            "games": self.games.tolist(),
        }


def matchup_matrix(
    ids: Sequence[str], results: Iterable[tuple[str, str, Outcome | str]]
) -> MatchupMatrix:
    """Aggregate (first, second, outcome-from-first's-side) results into a matrix over `ids`."""
    index = {member_id: i for i, member_id in enumerate(ids)}
    n = len(index)
    wins, draws, games = (np.zeros((n, n), dtype=np.int64) for _ in range(3))
    for first, second, raw in results:
        if first not in index or second not in index:
            raise UserError(f"result {first!r} vs {second!r} names a member outside {list(ids)}")
        i, j = index[first], index[second]
        outcome = as_outcome(raw)
        games[i, j] += 1
        games[j, i] += 1
        if outcome is Outcome.DRAW:
            draws[i, j] += 1
            draws[j, i] += 1
        elif outcome is Outcome.WIN:
            wins[i, j] += 1
        else:
            wins[j, i] += 1
    return MatchupMatrix(ids=list(index), wins=wins, draws=draws, games=games)
