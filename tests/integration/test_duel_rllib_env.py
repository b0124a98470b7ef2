"""The RLlib adapter of the duel game passes RLlib's env checks (no Ray cluster is started)."""

import gymnasium as gym
import numpy as np
import pytest
import ray
from ray.rllib.env.env_context import EnvContext
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from rl_platform.base.errors import UserError
from rl_platform.env_adapters.duel_env import DuelMultiAgentEnv
from rl_platform.envs.duel import REWARD_COMPONENTS


def test_passes_rllib_multi_agent_checks() -> None:
    # Other tests may share a session Ray; this one must not start one itself.
    ray_was_running = ray.is_initialized()
    env = DuelMultiAgentEnv({"seed": 0})
    assert isinstance(env, MultiAgentEnv)
    check_multiagent_environments(env)
    assert env.possible_agents == ["player_0", "player_1"]
    for agent in env.possible_agents:
        assert env.get_observation_space(agent) == gym.spaces.Box(
            -2.0, 2.0, shape=(64,), dtype=np.float32
        )
        assert env.get_action_space(agent) == gym.spaces.Discrete(10)
    assert ray.is_initialized() == ray_was_running


def test_full_episode_has_all_keys_and_reward_components() -> None:
    env = DuelMultiAgentEnv({"max_steps": 80, "stocks": 2, "seed": 1})
    obs, infos = env.reset()
    assert set(obs) == set(env.agents) == {"player_0", "player_1"}
    steps = 0
    while True:
        actions = {agent: env.get_action_space(agent).sample() for agent in env.agents}
        obs, rewards, terminateds, truncateds, infos = env.step(actions)
        steps += 1
        assert "__all__" in terminateds and "__all__" in truncateds
        for agent in actions:
            assert env.get_observation_space(agent).contains(obs[agent])
            assert set(infos[agent]["reward_components"]) == set(REWARD_COMPONENTS)
            assert isinstance(rewards[agent], float)
        if terminateds["__all__"] or truncateds["__all__"]:
            break
    assert steps <= 80
    assert env.agents == []
    assert {infos[agent]["outcome"] for agent in ("player_0", "player_1")} in (
        {"win", "loss"},
        {"draw"},
    )
    assert infos["player_0"]["ended_by"] == ("time" if steps == 80 else "knockout")
    assert terminateds["__all__"] and not truncateds["__all__"]
    obs, _ = env.reset()
    assert env.agents == ["player_0", "player_1"]


def test_timeout_can_be_reported_as_truncation() -> None:
    env = DuelMultiAgentEnv({"max_steps": 3, "truncate_on_timeout": True, "seed": 0})
    env.reset()
    for _ in range(3):
        _, _, terminateds, truncateds, _ = env.step({"player_0": 0, "player_1": 0})
    assert truncateds == {"player_0": True, "player_1": True, "__all__": True}
    assert not terminateds["__all__"]


def test_env_context_gives_each_copy_its_own_seed() -> None:
    first = DuelMultiAgentEnv(EnvContext({"seed": 3}, worker_index=1, vector_index=0))
    same = DuelMultiAgentEnv(EnvContext({"seed": 3}, worker_index=1, vector_index=0))
    other = DuelMultiAgentEnv(EnvContext({"seed": 3}, worker_index=2, vector_index=0))
    start = [env.reset()[0]["player_0"] for env in (first, same, other)]
    assert np.array_equal(start[0], start[1])
    assert not np.array_equal(start[0], start[2])


def test_unknown_config_key_fails_loudly() -> None:
    with pytest.raises(UserError, match="did you mean 'stocks'"):
        DuelMultiAgentEnv({"stock": 3})


def test_ansi_render() -> None:
    env = DuelMultiAgentEnv({"render_mode": "ansi"})
    env.reset(seed=0)
    assert "player_1" in env.render()


def test_rllib_env_runner_samples_full_episodes_without_a_cluster() -> None:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    ray_was_running = ray.is_initialized()
    config = (
        PPOConfig()
        .environment(DuelMultiAgentEnv, env_config={"max_steps": 50, "seed": 0})
        .multi_agent(policies={"main"}, policy_mapping_fn=lambda agent_id, episode, **kw: "main")
        .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
    )
    runner = MultiAgentEnvRunner(config=config)
    episodes = runner.sample(num_episodes=2)
    assert len(episodes) == 2 and all(episode.is_done for episode in episodes)
    assert all(len(episode) <= 50 for episode in episodes)
    assert ray.is_initialized() == ray_was_running
    runner.stop()
