"""Scripted duel styles (rusher, blocker, zoner; counter in test_duel_counter.py): they win,
they differ, they can be beaten.

The styles exist so that an opponent's history tells who it is: the statistics checked here
(how often it starts attacks, which ones, from how far, how long it blocks) are all visible in
the opponent half of the observation (mode one-hot, mode time, x).
"""

import numpy as np
import pytest

from rl_platform.envs.duel import OPPONENT_SLICE, SELF_SLICE, Action, DuelCore, Obs
from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.arena import run_matches
from rl_platform.envs.duel.counter import act_counter
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.scripted import (
    ActFn,
    act_based,
    act_blocker,
    act_random,
    act_rusher,
    act_zoner,
)
from rl_platform.teachers import DUEL_ENV, scripted_act

STYLES: dict[str, ActFn] = {"rusher": act_rusher, "blocker": act_blocker, "zoner": act_zoner}
NEW_STYLES: dict[str, ActFn] = {**STYLES, "counter": act_counter}
"""Every style issue #20 added: `counter` hides its style, the other three show it."""
ATTACKS = [Mode.LIGHT, Mode.HEAVY, Mode.GRAB]


def _win_rate(agent: ActFn, opponent: ActFn, *, games: int, seed: int) -> float:
    """`agent`'s share of `games` games, half from each seat."""
    first = run_matches(agent, opponent, num_games=games // 2, seed=seed)
    second = run_matches(opponent, agent, num_games=games // 2, seed=seed + 1)
    return (first.wins_a + second.wins_b) / games


def test_styles_are_registered() -> None:
    obs = DuelCore(4, seed=0).reset()[:, 0]
    for name, act in NEW_STYLES.items():
        registered = scripted_act(env_id=DUEL_ENV, agent=name)(obs, np.random.default_rng(0))
        assert (registered == act(obs, np.random.default_rng(0))).all()


@pytest.mark.parametrize("name", NEW_STYLES)
def test_style_beats_random(name: str) -> None:
    assert _win_rate(NEW_STYLES[name], act_random, games=200, seed=11) >= 0.9


def _grab_blockers(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`based`, except that it walks up to a blocking opponent and grabs it."""
    me, op = obs[:, SELF_SLICE], obs[:, OPPONENT_SLICE]
    dx = (op[:, Obs.X] - me[:, Obs.X]) * R.BLAST_X
    facing = me[:, Obs.FACING] * dx > 0
    blocking = (op[:, Obs.MODE_ONE_HOT + Mode.BLOCK] > 0.5) & facing
    walk_in = blocking & (np.abs(dx) >= 0.9) & (np.abs(dx) < 2.0)
    grab = blocking & (me[:, Obs.ON_GROUND] > 0.5) & (np.abs(dx) < 0.9)
    toward = np.where(dx >= 0, Action.RIGHT, Action.LEFT)
    actions = np.where(walk_in, toward, act_based(obs, rng))
    return np.where(grab, Action.GRAB, actions).astype(np.int64)


def _style_stats(agent: ActFn, *, games: int = 64, frames: int = 400) -> dict[str, float]:
    """What `agent` (player 0) does against `based` over the first `frames` frames of `games`
    games, read from the game state."""
    core = DuelCore(games, seed=0)
    rng = np.random.default_rng(0)
    obs = core.reset()
    s = core.state
    live_frames = attacks = heavies = blocking = 0
    distances, attack_distances = [], []
    for _ in range(frames):
        actions = np.stack([agent(obs[:, 0], rng), act_based(obs[:, 1], rng)], axis=1)
        obs = core.step(actions).obs
        live = ~s.done
        mode, distance = s.mode[:, 0], np.abs(s.x[:, 0] - s.x[:, 1])
        started = live & (s.timer[:, 0] == 0) & np.isin(mode, ATTACKS)
        live_frames += live.sum()
        attacks += started.sum()
        heavies += (started & (mode == Mode.HEAVY)).sum()
        blocking += (live & (mode == Mode.BLOCK)).sum()
        distances.append(distance[live])
        attack_distances.append(distance[started])
    return {
        "attacks_per_frame": attacks / live_frames,
        "heavy_share": heavies / attacks,
        "block_share": blocking / live_frames,
        "distance": float(np.concatenate(distances).mean()),
        "attack_distance": float(np.concatenate(attack_distances).mean()),
    }


def _leader(stats: dict[str, dict[str, float]], key: str, *, lowest: bool = False) -> str:
    pick = min if lowest else max
    return pick(stats, key=lambda name: stats[name][key])


def test_styles_differ_in_what_their_history_shows() -> None:
    stats = {name: _style_stats(act) for name, act in {"based": act_based, **STYLES}.items()}
    assert _leader(stats, "attacks_per_frame") == "rusher"
    assert _leader(stats, "distance", lowest=True) == "rusher"
    assert _leader(stats, "block_share") == "blocker"
    assert _leader(stats, "attack_distance") == "zoner"
    assert stats["zoner"]["heavy_share"] == 1.0
    assert stats["rusher"]["heavy_share"] < 0.2


@pytest.mark.parametrize(
    ("name", "answer"),
    [("rusher", act_blocker), ("blocker", _grab_blockers), ("zoner", act_rusher)],
    ids=["blocking_beats_rusher", "grabs_beat_blocker", "closing_in_beats_zoner"],
)
def test_style_loses_to_its_answer(name: str, answer: ActFn) -> None:
    assert _win_rate(answer, STYLES[name], games=100, seed=3) >= 0.8
