"""`shifter`: a duel style that commits to one of three plans per game and never says which.

Per game `shifter` plays `rusher`, `blocker` or `zoner` (docs/duel.md, "Scripted styles"),
picked by its private draw (`Obs.PRIVATE_DRAW`, shown only in its own half of the
observation), and keeps that plan for the whole game. Each plan loses to a different answer
(rushers to blocking, blockers to grabs and spaced pokes, zoners to approaching), so an agent
that tells the plan from how `shifter` has moved so far can pick the answer; one that reads a
single frame sees where `shifter` stands and how fast it moves, but not why.

`wins_by_plan` measures any agent against `shifter`, split by the plan of each game, the way
`counter.wins_by_blind_spot` splits `counter`'s games: the best fixed (memoryless) responder's
mean over the plans is the ceiling a policy without memory is read against
(`benchmarks/duel_hidden_intent.py`).
"""

from collections.abc import Callable

import numpy as np

from rl_platform.envs.duel.arena import wins_by_hidden_value
from rl_platform.envs.duel.observation import Obs
from rl_platform.envs.duel.scripted import ActFn, act_blocker, act_rusher, act_zoner

PLANS: dict[str, ActFn] = {"rusher": act_rusher, "blocker": act_blocker, "zoner": act_zoner}
"""`shifter`'s plans, indexed by its private draw in this order."""


def shifter_plan(obs: np.ndarray) -> np.ndarray:
    """The index into `PLANS` of the plan `shifter` plays in each game, from its own
    observation (`obs[B, 64]`)."""
    draw = obs[:, Obs.PRIVATE_DRAW]
    return np.minimum((draw * len(PLANS)).astype(np.int64), len(PLANS) - 1)


def act_shifter(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Each game's plan acts for it; every plan sees every row (they are vectorized and
    cheap), so the random draws of each plan do not depend on which games play it."""
    plan = shifter_plan(obs)
    actions = np.stack([act(obs, rng) for act in PLANS.values()])
    return actions[plan, np.arange(len(obs))]


def wins_by_plan(make_agent: Callable[[], ActFn], *, games: int, seed: int) -> dict[str, float]:
    """An agent's win rate against `shifter` in the games of each plan
    (`arena.wins_by_hidden_value`)."""
    wins = wins_by_hidden_value(
        make_agent, act_shifter, shifter_plan, range(len(PLANS)), games=games, seed=seed
    )
    return {name: wins[index] for index, name in enumerate(PLANS)}
