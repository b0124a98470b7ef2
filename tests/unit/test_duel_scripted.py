"""Scripted duel agents: registry, output contract, crafted situations and win rates."""

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.envs.duel import NUM_ACTIONS, Action, DuelCore, Obs
from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.arena import run_matches
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.scripted import act_based, act_constant, act_random
from rl_platform.nets.history_window import start_window
from rl_platform.teachers import DUEL_ENV, scripted_act, scripted_policies

BASED = act_based
DUEL_AGENTS = sorted(entry.name for entry in scripted_policies() if entry.env == "duel")


def test_registry_names_the_duel_agents_and_suggests_close_matches() -> None:
    assert {"random", "constant", "based"} <= set(DUEL_AGENTS)
    with pytest.raises(UserError, match="Did you mean 'based'") as info:
        scripted_act(env_id=DUEL_ENV, agent="basde")
    assert "constant" in str(info.value)  # the full list is shown too
    with pytest.raises(UserError, match="name your own as"):
        scripted_act(env_id="CartPole-v0", agent="based")


def test_registry_agents_read_opponent_history_observations() -> None:
    """transformer_lstm runs hand scripted modules {obs, opponent_history, history_mask}."""
    obs = DuelCore(4, seed=0).reset()[:, 0]
    windows = [start_window(row[32:], 3) for row in obs]
    converted = {
        "obs": obs[:, :32],
        "opponent_history": np.stack([frames for frames, _ in windows]),
        "history_mask": np.stack([mask for _, mask in windows]),
    }
    based = scripted_act(env_id=DUEL_ENV, agent="based")
    raw = based(obs, np.random.default_rng(0))
    assert (based(converted, np.random.default_rng(0)) == raw).all()


@pytest.mark.parametrize("name", DUEL_AGENTS)
def test_agents_return_valid_actions_for_a_batch(name: str) -> None:
    core = DuelCore(32, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs = core.step(rng.integers(0, NUM_ACTIONS, size=(32, 2))).obs
    actions = scripted_act(env_id=DUEL_ENV, agent=name)(obs[:, 0], rng)
    assert actions.shape == (32,) and actions.dtype.kind == "i"
    assert ((actions >= 0) & (actions < NUM_ACTIONS)).all()


def _obs_after(setup) -> np.ndarray:
    """Player 0's observation after placing players with `setup(state)` (one game)."""
    core = DuelCore(1, seed=0, spawn_jitter=0.0)
    setup(core.state)
    return core.observe()[:, 0]


def test_based_blocks_a_heavy_in_startup_close_by() -> None:
    def setup(s):
        s.x[0] = [-0.6, 0.6]
        s.mode[0, 1], s.timer[0, 1] = Mode.HEAVY, 1

    assert BASED(_obs_after(setup), np.random.default_rng(0))[0] == Action.BLOCK


def test_based_attacks_in_range_and_grabs_a_blocker() -> None:
    def in_range(s):
        s.x[0] = [-0.5, 0.5]

    def blocking(s):
        s.x[0] = [-0.4, 0.4]
        s.mode[0, 1] = Mode.BLOCK

    assert BASED(_obs_after(in_range), np.random.default_rng(0))[0] in (
        Action.LIGHT,
        Action.HEAVY,
    )
    assert BASED(_obs_after(blocking), np.random.default_rng(0))[0] == Action.GRAB


def test_based_recovers_towards_the_stage() -> None:
    def off_left(s):
        s.x[0, 0], s.y[0, 0], s.vy[0, 0] = -R.STAGE_HALF_WIDTH - 3.0, -1.0, -0.3
        s.on_ground[0, 0], s.facing[0, 0], s.air_dash[0, 0] = False, -1.0, False

    action = BASED(_obs_after(off_left), np.random.default_rng(0))[0]
    assert action in (Action.RIGHT, Action.JUMP)
    core = DuelCore(1, seed=0, spawn_jitter=0.0)
    off_left(core.state)
    rng = np.random.default_rng(0)
    for _ in range(60):
        obs = core.observe()
        core.step(np.stack([BASED(obs[:, 0], rng), np.zeros(1, np.int64)], axis=1))
    assert core.state.stocks[0, 0] == 3 and core.state.on_ground[0, 0]


def test_based_approaches_from_afar() -> None:
    obs = _obs_after(lambda s: None)
    assert obs[0, Obs.X] < obs[0, 32 + Obs.X]
    assert BASED(obs, np.random.default_rng(0))[0] in (Action.RIGHT, Action.DASH)


@pytest.mark.parametrize("based_seat", [0, 1])
def test_based_beats_random(based_seat: int) -> None:
    agents = [act_random, act_random]
    agents[based_seat] = BASED
    result = run_matches(*agents, num_games=200, seed=11)
    based_wins = result.wins_a if based_seat == 0 else result.wins_b
    assert based_wins >= 0.9 * result.games


def test_based_beats_constant() -> None:
    result = run_matches(BASED, act_constant, num_games=100, seed=5)
    assert result.wins_a >= 0.9 * result.games


def test_random_vs_random_is_roughly_symmetric() -> None:
    result = run_matches(act_random, act_random, num_games=600, seed=2)
    decisive = result.wins_a + result.wins_b
    assert decisive > 500
    assert 0.4 <= result.wins_a / decisive <= 0.6
