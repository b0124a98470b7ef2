"""Which module plays each seat of N vectorized games, drawn per game at its reset (no Ray).

The array env runner keeps `module_of[N, P]` as indices into a fixed module list. At each
game's reset it draws the game's pairing from the league's `SlotPlan` with the same
distribution as the stock path (rl_platform/league/routing.py): a learner uniformly over the
plan's learners, the learner's seat uniformly over the P seats, and the opponent from the
plan's per-learner distribution. Without a league every seat plays `main` (mirror games).
A game is `recorded` (its result counts for the league) only if it was drawn from a plan.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rl_platform.league.routing import RunnerPlan

NO_MEMBER = ""


@dataclass
class SeatPlan:
    """Per-game pairings of N games with P seats (arrays are updated in place on reset)."""

    module_ids: tuple[str, ...]
    """Every module a seat can be mapped to; `module_of` holds indices into this tuple."""
    module_of: np.ndarray
    """[N, P] int module index per seat."""
    learner_seat: np.ndarray
    """[N] int: the seat the learner controls (its results count), -1 in mirror games."""
    member: list[str]
    """[N] the league member the learner plays in each game, NO_MEMBER when unrecorded."""
    plan_version: np.ndarray
    """[N] version of the plan the pairing came from (-1: no plan)."""

    @classmethod
    def mirror(cls, *, module_ids: Sequence[str], main: str, num_games: int, num_seats: int):
        """Every seat of every game plays `main` (no league, or no plan installed yet)."""
        ids = tuple(module_ids)
        return cls(
            module_ids=ids,
            module_of=np.full((num_games, num_seats), ids.index(main), np.int64),
            learner_seat=np.full(num_games, -1, np.int64),
            member=[NO_MEMBER] * num_games,
            plan_version=np.full(num_games, -1, np.int64),
        )

    def index_of(self, module_id: str) -> int:
        return self.module_ids.index(module_id)

    def draw(self, games: np.ndarray, runner: RunnerPlan | None, *, main: str) -> None:
        """New pairings for `games` (indices) from `runner`'s plan, or mirror games."""
        if len(games) == 0:
            return
        num_seats = self.module_of.shape[1]
        if runner is None:
            self.module_of[games] = self.index_of(main)
            self.learner_seat[games] = -1
            self.plan_version[games] = -1
            for g in games.tolist():
                self.member[g] = NO_MEMBER
            return
        learners = sorted(runner.plan.opponents)
        rng = runner.rng
        chosen = rng.integers(len(learners), size=len(games))
        seats = rng.integers(num_seats, size=len(games))
        for learner_index, learner in enumerate(learners):
            rows = np.flatnonzero(chosen == learner_index)
            if len(rows):
                self._draw_opponents(games[rows], seats[rows], learner, runner)
        self.learner_seat[games] = seats
        self.plan_version[games] = runner.version

    def _draw_opponents(
        self, games: np.ndarray, seats: np.ndarray, learner: str, runner: RunnerPlan
    ) -> None:
        choices = runner.plan.opponents[learner]
        probs = np.asarray([c.probability for c in choices], np.float64)
        picks = runner.rng.choice(len(choices), size=len(games), p=probs / probs.sum())
        opponent_index = np.asarray([self.index_of(c.module_id) for c in choices], np.int64)
        self.module_of[games] = opponent_index[picks][:, None]
        self.module_of[games, seats] = self.index_of(learner)
        for g, pick in zip(games.tolist(), picks.tolist(), strict=True):
            self.member[g] = choices[pick].member_id

    def learner_module(self, game: int) -> str | None:
        seat = int(self.learner_seat[game])
        return None if seat < 0 else self.module_ids[int(self.module_of[game, seat])]
