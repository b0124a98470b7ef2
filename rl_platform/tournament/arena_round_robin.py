"""Duel round robins in the vectorized `DuelCore` arena: the fast path of the tournament.

Each ordered seating of a pair plays all its games at once (`envs.duel.arena.run_matches`),
every policy acting on the whole batch in one call through an `ArenaSeat`
(`evaluation/arena_games.py`).
"""

from collections import Counter
from collections.abc import Mapping
from typing import Any

import torch

from rl_platform.base.seed_tree import SeedTree
from rl_platform.envs.duel.arena import run_matches
from rl_platform.evaluation.arena_games import ArenaSeat
from rl_platform.league.leaderboard import matchup_matrix, tournament_schedule
from rl_platform.league.results import Outcome
from rl_platform.policies import Policy
from rl_platform.tournament.report import GameResult, TournamentReport


def play_arena_round_robin(
    policies: Mapping[str, Policy],
    *,
    games: int,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
) -> TournamentReport:
    """Every pair plays `games` games (seats alternating); results from the first seat's side."""
    torch.manual_seed(seed)  # learned policies sample with torch
    ids = list(policies)
    seatings = Counter(tournament_schedule(ids, games))
    results: list[GameResult] = []
    for index, ((first, second), count) in enumerate(sorted(seatings.items())):
        seats = (
            ArenaSeat(policies[first], seating=index),
            ArenaSeat(policies[second], seating=index),
        )
        match = run_matches(
            *seats,
            num_games=count,
            seed=SeedTree(seed).seating(index),  # distinct spawn jitter per seating
            **dict(env_kwargs or {}),
        )
        for seat in seats:
            seat.leave()
        results += [(first, second, Outcome.WIN)] * match.wins_a
        results += [(first, second, Outcome.LOSS)] * match.wins_b
        results += [(first, second, Outcome.DRAW)] * match.draws
    return TournamentReport(results=results, matrix=matchup_matrix(ids, results))
