"""Scripted duel agents: registry, output contract, crafted situations and win rates."""

import numpy as np
import pytest

from rl_platform.envs.duel import (
    NUM_ACTIONS,
    SCRIPTED_AGENTS,
    Action,
    DuelCore,
    Obs,
    UnknownScriptedAgentError,
    get_scripted_agent,
)
from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.arena import run_matches
from rl_platform.envs.duel.rules import Mode

BASED = get_scripted_agent("based")


def test_registry_names_descriptions_and_lookup() -> None:
    assert {"random", "constant", "based"} <= set(SCRIPTED_AGENTS)
    for name, agent in SCRIPTED_AGENTS.items():
        assert agent.name == name and agent.description and "\n" not in agent.description
    assert get_scripted_agent("based") is SCRIPTED_AGENTS["based"]


def test_unknown_agent_error_names_close_matches() -> None:
    with pytest.raises(UnknownScriptedAgentError, match="Did you mean 'based'") as info:
        get_scripted_agent("basde")
    assert "constant" in str(info.value)  # the full list is shown too


@pytest.mark.parametrize("name", sorted(SCRIPTED_AGENTS))
def test_agents_return_valid_actions_for_a_batch(name: str) -> None:
    core = DuelCore(32, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        obs = core.step(rng.integers(0, NUM_ACTIONS, size=(32, 2))).obs
    actions = SCRIPTED_AGENTS[name](obs[:, 0], rng)
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
    agents = [SCRIPTED_AGENTS["random"], SCRIPTED_AGENTS["random"]]
    agents[based_seat] = BASED
    result = run_matches(*agents, num_games=200, seed=11)
    based_wins = result.wins_a if based_seat == 0 else result.wins_b
    assert based_wins >= 0.9 * result.games


def test_based_beats_constant() -> None:
    result = run_matches(BASED, SCRIPTED_AGENTS["constant"], num_games=100, seed=5)
    assert result.wins_a >= 0.9 * result.games


def test_random_vs_random_is_roughly_symmetric() -> None:
    random = SCRIPTED_AGENTS["random"]
    result = run_matches(random, random, num_games=600, seed=2)
    decisive = result.wins_a + result.wins_b
    assert decisive > 500
    assert 0.4 <= result.wins_a / decisive <= 0.6
