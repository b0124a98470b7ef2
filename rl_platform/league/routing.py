"""Env-runner side of the league: which module plays each agent, and each game's result.

No Ray import (episodes are duck-typed), so the routing is unit-testable. The driver ships its
`SlotPlan` to every env runner process (`install_plan`, called through
`EnvRunnerGroup.foreach_env_runner`); the policy mapping function then draws each episode's
pairing with the process-local RNG:

1. a learner (uniform over the plan's learners), and which of the two agents it controls
   (a fair coin, so learners play both seats / move orders);
2. the learner's opponent from the plan (`sample_opponent`).

The pairing is stored in `episode.custom_data` (RLlib deep-copies it into every episode chunk),
so the second agent's mapping call and `on_episode_end` see the same draw. A game whose slot
was reloaded with another member while it was running mixed two policies: its result is
dropped rather than credited to either.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.base.seed_tree import SeedTree
from rl_platform.league.results import Outcome
from rl_platform.league.slots import SlotPlan, sample_opponent, slot_for_module_id

PAIRING_KEY = "league_pairing"
# Metric keys on env runners; the driver reads them back from the iteration's result.
GAMES_KEY = "league_games"
DROPPED_KEY = "league_games_dropped"
FALLBACK_MODULE = MAIN_MODULE_ID


@dataclass
class RunnerPlan:
    """The plan an env runner process samples from (one per process, see `install_plan`)."""

    plan: SlotPlan
    version: int
    rng: np.random.Generator


_CURRENT: RunnerPlan | None = None


def install_plan(
    plan: Mapping[str, Any], *, version: int, seed: int | None, worker_index: int
) -> None:
    """Make `plan` (a `SlotPlan.to_dict()`) this process's plan; seeds a fresh local RNG."""
    global _CURRENT
    entropy = SeedTree(seed).runner_plan(worker=worker_index, version=version)
    _CURRENT = RunnerPlan(
        plan=SlotPlan.from_dict(plan), version=version, rng=np.random.default_rng(entropy)
    )


def current_plan() -> RunnerPlan | None:
    return _CURRENT


@dataclass
class Pairing:
    """One game's draw, kept in `episode.custom_data[PAIRING_KEY]` (a plain dataclass: RLlib
    deep-copies it into every chunk and pickles it to the driver)."""

    learner: str
    """The learner's module id."""
    learner_agent: Any
    """The agent the learner controls (the array runner: its seat index); None until the
    second agent's mapping call, when the first agent got the opponent."""
    member: str | None
    """The opponent's league member id; None for the mirror match of a runner without a plan
    (never recorded)."""
    module: str
    """The module id that plays the opponent (a slot's, a scripted one's, or a learner's)."""
    version: int
    """The plan version it was drawn from (-1: no plan)."""


def _draw_pairing(first_agent: Any) -> Pairing:
    runner = _CURRENT
    if runner is None:
        # No plan yet (e.g. a just-restarted env runner): mirror match, never recorded.
        return Pairing(FALLBACK_MODULE, first_agent, None, FALLBACK_MODULE, -1)
    learners = sorted(runner.plan.opponents)
    learner = learners[int(runner.rng.integers(len(learners)))]
    choice = sample_opponent(runner.plan, learner, rng=runner.rng)
    learner_first = bool(runner.rng.integers(2))
    return Pairing(
        learner=learner,
        learner_agent=first_agent if learner_first else None,
        member=choice.member_id,
        module=choice.module_id,
        version=runner.version,
    )


def league_mapping_fn(agent_id: Any, episode: Any, **kwargs: Any) -> str:
    """RLlib `policy_mapping_fn` for two-player games; see the module docstring."""
    try:
        custom_data = episode.custom_data
    except AttributeError:
        # No episode (RLlib probing spaces), or a chunk still in its constructor during
        # `episode.cut()`, which passes the known modules and ignores this answer.
        return FALLBACK_MODULE
    pairing = custom_data.get(PAIRING_KEY)
    if pairing is None:
        pairing = custom_data[PAIRING_KEY] = _draw_pairing(agent_id)
        return pairing.learner if pairing.learner_agent == agent_id else pairing.module
    if pairing.learner_agent is None:
        # The first agent got the opponent, so this (second) agent is the learner.
        pairing.learner_agent = agent_id
    return pairing.learner if pairing.learner_agent == agent_id else pairing.module


def pairing_of(episode: Any) -> Pairing | None:
    return episode.custom_data.get(PAIRING_KEY)


def is_stale(pairing: Pairing) -> bool:
    """True if the pairing's opponent slot now holds another member (weights swapped mid-game)."""
    runner = _CURRENT
    if pairing.member is None or runner is None:
        return True
    if pairing.version == runner.version:
        return False
    slot = slot_for_module_id(pairing.module)
    return slot is not None and (
        slot >= len(runner.plan.slots) or runner.plan.slots[slot] != pairing.member
    )


def game_outcome(*, learner_info: Any, learner_return: float, opponent_return: float) -> Outcome:
    """The learner's result: the env's `info["outcome"]` if it reports one, else by returns.

    The duel reports outcomes (its shaped rewards do not decide games); PettingZoo board games
    such as connect four give +1 / -1 / 0 at the end, so comparing returns is exact there.
    """
    if isinstance(learner_info, Mapping) and learner_info.get("outcome") in ("win", "draw", "loss"):
        return Outcome(learner_info["outcome"])
    if learner_return > opponent_return:
        return Outcome.WIN
    return Outcome.LOSS if learner_return < opponent_return else Outcome.DRAW
