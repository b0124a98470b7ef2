"""PettingZoo front end of the duel game: API compliance, rendering, infos and seeding."""

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from rl_platform.envs.duel import OBS_SIZE, REWARD_COMPONENTS, Action, DuelParallelEnv
from rl_platform.envs.duel.config import DEFAULT_REWARD_WEIGHTS


def test_parallel_api() -> None:
    parallel_api_test(DuelParallelEnv(seed=0), num_cycles=1000)


def test_spaces_and_agents() -> None:
    env = DuelParallelEnv()
    assert env.possible_agents == ["player_0", "player_1"]
    assert env.agents == []
    obs, infos = env.reset(seed=0)
    assert env.agents == env.possible_agents
    for agent in env.agents:
        assert env.observation_space(agent).shape == (OBS_SIZE,)
        assert env.observation_space(agent).contains(obs[agent])
        assert env.action_space(agent).n == 10
        assert infos[agent] == {}


def test_infos_carry_reward_components_that_sum_to_the_reward() -> None:
    env = DuelParallelEnv(seed=1, max_steps=40)
    env.reset()
    rng = np.random.default_rng(1)
    for _ in range(40):
        actions = {agent: int(rng.integers(10)) for agent in env.agents}
        _, rewards, terminated, truncated, infos = env.step(actions)
        for agent in actions:
            parts = infos[agent]["reward_components"]
            assert set(parts) == set(REWARD_COMPONENTS)
            expected = sum(DEFAULT_REWARD_WEIGHTS[k] * v for k, v in parts.items())
            assert rewards[agent] == pytest.approx(expected, abs=1e-5)
        if not env.agents:
            break
    assert truncated["player_0"] or terminated["player_0"]
    assert {infos[a]["outcome"] for a in infos} <= {"win", "loss", "draw"}
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"player_0": 0, "player_1": 0})


def test_reset_seed_makes_episodes_reproducible() -> None:
    def rollout(seed: int) -> np.ndarray:
        env = DuelParallelEnv()
        obs, _ = env.reset(seed=seed)
        frames = [obs["player_0"]]
        for t in range(30):
            obs, *_ = env.step({"player_0": t % 10, "player_1": (3 * t) % 10})
            frames.append(obs["player_0"])
        return np.stack(frames)

    assert np.array_equal(rollout(4), rollout(4))
    assert not np.array_equal(rollout(4), rollout(5))


def test_rgb_and_ansi_rendering() -> None:
    env = DuelParallelEnv(render_mode="rgb_array", seed=0)
    env.reset()
    env.step({"player_0": Action.RIGHT, "player_1": Action.RIGHT})
    frame = env.render()
    assert frame.shape == (128, 256, 3) and frame.dtype == np.uint8
    colors = {tuple(c) for c in frame.reshape(-1, 3)}
    assert (220, 70, 60) in colors and (70, 130, 230) in colors  # both players are drawn
    text_env = DuelParallelEnv(render_mode="ansi", seed=0)
    text_env.reset()
    text = text_env.render()
    assert "#" in text and "player_0: hp=100.0" in text and "player_1" in text
    grid = text.splitlines()[:18]  # the stage picture, above the status lines
    assert any("0" in row for row in grid) and any("1" in row for row in grid)


def test_bad_render_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="render_mode"):
        DuelParallelEnv(render_mode="human")


def test_the_closing_zone_is_drawn_once_it_moves() -> None:
    zone_colour = (200, 40, 120)
    env = DuelParallelEnv(render_mode="rgb_array", seed=0, max_steps=100, zone_closes_at=0.5)
    text_env = DuelParallelEnv(render_mode="ansi", seed=0, max_steps=100, zone_closes_at=0.5)
    idle = {"player_0": Action.IDLE, "player_1": Action.IDLE}
    for game in (env, text_env):
        game.reset()
    assert zone_colour not in {tuple(c) for c in env.render().reshape(-1, 3)}
    assert "zone" not in text_env.render()
    for _ in range(75):  # half way through the closing: the lines stand at about +-6.8
        env.step(idle)
        text_env.step(idle)
    frame = env.render()
    columns = sorted({int(c) for c in np.nonzero((frame == zone_colour).all(axis=2))[1]})
    assert len(columns) == 2 and columns[0] + columns[1] == 255  # mirrored around the centre
    assert 40 < columns[0] < 128 - 40  # well inside the blast lines at the frame's edges
    text = text_env.render()
    assert "zone=+-6.8" in text and text.splitlines()[0].count("|") == 2
