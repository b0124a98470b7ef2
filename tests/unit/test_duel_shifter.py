"""`shifter` commits to one hidden plan per game; its plans can be answered from the frame."""

import numpy as np

from rl_platform.envs.duel.core import DuelCore
from rl_platform.envs.duel.observation import HALF_SIZE, Obs
from rl_platform.envs.duel.shifter import PLANS, act_shifter, shifter_plan, wins_by_plan
from rl_platform.teachers import get_scripted


def _shifter_obs(games: int, seed: int) -> np.ndarray:
    return DuelCore(games, seed=seed).reset()[:, 1]


def test_each_game_plays_the_plan_its_private_draw_picks() -> None:
    obs = _shifter_obs(300, seed=3)
    plan = shifter_plan(obs)
    assert set(np.bincount(plan, minlength=3)) and np.bincount(plan).min() > 70  # ~uniform
    expected_rng, rng = np.random.default_rng(5), np.random.default_rng(5)
    per_plan = [act(obs, expected_rng) for act in PLANS.values()]
    actions = act_shifter(obs, rng)
    for index in range(len(PLANS)):
        rows = plan == index
        np.testing.assert_array_equal(actions[rows], per_plan[index][rows])


def test_the_plan_is_not_in_the_opponents_half() -> None:
    obs = _shifter_obs(50, seed=4)
    assert np.all(obs[:, HALF_SIZE + Obs.PRIVATE_DRAW] == 0.0)  # the learner's view of it
    assert np.unique(shifter_plan(obs)).size == 3


def test_answerer_answers_every_plan_without_memory() -> None:
    """Why `shifter` is not in the default hidden-intent set (docs/duel.md): its plans are the
    open styles, and one memoryless responder answers all three from the frame."""
    answerer = get_scripted("duel", "answerer").build({})
    wins = wins_by_plan(lambda: answerer, games=30, seed=11)
    assert min(wins.values()) >= 0.8, wins
