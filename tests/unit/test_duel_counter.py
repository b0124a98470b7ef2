"""`counter`: a style whose best response only its history shows (issue #20).

It answers every attack with its counter except one per game, its blind spot, drawn from its
private draw (`Obs.PRIVATE_DRAW`, shown in its own half only). The tests check the three
claims that make it a test of reading the opponent: the blind spot's attack wins, every other
attack loses, and nothing the opponent sees before the first exchange depends on the draw.
"""

import numpy as np
import pytest

from rl_platform.envs.duel import OPPONENT_SLICE, Action, DuelCore
from rl_platform.envs.duel.counter import (
    BLIND_SPOTS,
    act_counter,
    counter_blind_spot,
    make_opener,
    wins_by_blind_spot,
)
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.tactics import View


def test_the_blind_spot_is_drawn_per_game_in_equal_shares() -> None:
    blind = counter_blind_spot(DuelCore(3000, seed=0).reset()[:, 0])
    shares = [(blind == mode).mean() for mode in BLIND_SPOTS]
    assert shares == pytest.approx([1 / 3] * 3, abs=0.03)


@pytest.mark.parametrize("attack", BLIND_SPOTS, ids=lambda mode: mode.name.lower())
def test_an_attack_wins_exactly_in_the_games_where_it_is_the_blind_spot(attack: Mode) -> None:
    wins = wins_by_blind_spot(lambda: make_opener(attack), games=150, seed=3)
    assert wins[attack] >= 0.9
    assert all(wins[other] <= 0.1 for other in BLIND_SPOTS if other != attack)


def test_before_the_first_attack_its_games_look_the_same_whatever_the_draw() -> None:
    """An opponent that walks up and waits sees the same frames for every blind spot, so no
    single frame tells them apart: only what `counter` did in earlier exchanges does."""

    def walk_up(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        v = View.of(obs)
        return np.where(np.abs(v.dx) > 1.0, v.toward, Action.IDLE)

    seen = []
    for draw in (0.1, 0.5, 0.9):  # light, heavy, grab
        core = DuelCore(16, seed=4)
        obs = core.reset()
        core.state.draw[:, 1] = draw
        obs = core.observe()
        rng = np.random.default_rng(0)
        frames = []
        for _ in range(120):
            actions = np.stack([walk_up(obs[:, 0], rng), act_counter(obs[:, 1], rng)], axis=1)
            obs = core.step(actions).obs
            frames.append(obs[:, 0, OPPONENT_SLICE].copy())
        seen.append(np.stack(frames))
    assert np.array_equal(seen[0], seen[1]) and np.array_equal(seen[0], seen[2])
