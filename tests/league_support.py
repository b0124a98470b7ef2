"""League draws the tests make on the driver, the way an env runner makes them.

Production draws episode opponents only on env runners (`routing`, with a process-local RNG);
the driver-side `League` only plans. Tests that check exact resume draw with the league's own
RNG instead, so a restored RNG state shows in the draws.
"""

import pytest

from rl_platform.league import routing
from rl_platform.league.league import League
from rl_platform.league.slots import OpponentChoice, sample_opponent


def sample_league_opponent(league: League, learner_id: str) -> OpponentChoice:
    """One episode's opponent from the league's plan (planned first if none), drawn with its RNG."""
    plan = league.plan if league.plan is not None else league.plan_slots()
    return sample_opponent(plan, learner_id, rng=league.matchmaker.rng)


def clear_runner_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process has no env-runner plan (a just-started runner); undone after the test."""
    monkeypatch.setattr(routing, "_CURRENT", None)
