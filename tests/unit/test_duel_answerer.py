"""`answerer`, the encoder benchmark's kickstart teacher: it answers every open style from the
frame alone (issue #43, item 2; the measured table is in docs/duel.md)."""

import numpy as np
import pytest

from rl_platform.envs.duel import DuelCore
from rl_platform.envs.duel.answerer import act_answerer
from rl_platform.envs.duel.arena import run_matches
from rl_platform.teachers import DUEL_ENV, scripted_act

OPEN_STYLES = ("based", "rusher", "blocker", "zoner")


def test_answerer_is_registered() -> None:
    obs = DuelCore(4, seed=0).reset()[:, 0]
    registered = scripted_act(env_id=DUEL_ENV, agent="answerer")(obs, np.random.default_rng(0))
    assert (registered == act_answerer(obs, np.random.default_rng(0))).all()


@pytest.mark.parametrize("style", OPEN_STYLES)
def test_answerer_beats_each_open_style(style: str) -> None:
    opponent = scripted_act(env_id=DUEL_ENV, agent=style)
    first = run_matches(act_answerer, opponent, num_games=20, seed=21)
    second = run_matches(opponent, act_answerer, num_games=20, seed=22)
    assert (first.wins_a + second.wins_b) / 40 >= 0.8
