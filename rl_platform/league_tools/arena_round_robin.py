"""Duel round robins in the vectorized `DuelCore` arena: the fast path of the tournament.

Each ordered seating of a pair plays all its games at once (`envs.duel.arena.run_matches`),
every policy acting on the whole batch in one call. A learned policy keeps one recurrent state
(and, for transformer_lstm, one opponent-history window) per game row: `ArenaSeat` names each
row of a seating with its own key, and the policy forgets those keys once the seating is over,
so every game starts from the policy's initial state.
"""

from collections import Counter
from collections.abc import Hashable, Mapping
from typing import Any

import numpy as np
import torch

from rl_platform.envs.duel.arena import run_matches
from rl_platform.evaluation.envs import EnvTarget
from rl_platform.league.leaderboard import matchup_matrix, tournament_schedule
from rl_platform.league.results import Outcome
from rl_platform.league_tools.report import GameResult, TournamentReport
from rl_platform.policies import Policy
from rl_platform.teachers import DUEL_ENV


def arena_plays(target: EnvTarget) -> bool:
    """The vectorized arena plays the duel on raw observations, to the game's own end: a run
    trained with wrappers, or games cut by a step limit, take the per-episode rollout."""
    return target.env_id == DUEL_ENV and not target.wrappers


class ArenaSeat:
    """A `Policy` as the arena's `act(obs[B, D], rng)`, one state key per game row."""

    def __init__(self, policy: Policy, *, seating: int) -> None:
        self.policy = policy
        self.seating = seating
        self.keys: list[Hashable] = []

    def __call__(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if len(self.keys) != len(obs):
            self.keys = [(self.seating, row) for row in range(len(obs))]
        return self.policy.act(obs, rng, keys=self.keys)

    def leave(self) -> None:
        self.policy.forget(self.keys)


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
            seed=seed + 7919 * index,  # distinct spawn jitter per seating
            **dict(env_kwargs or {}),
        )
        for seat in seats:
            seat.leave()
        results += [(first, second, Outcome.WIN)] * match.wins_a
        results += [(first, second, Outcome.LOSS)] * match.wins_b
        results += [(first, second, Outcome.DRAW)] * match.draws
    return TournamentReport(results=results, matrix=matchup_matrix(ids, results))
