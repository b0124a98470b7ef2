"""experiments/mujoco_ppo.yaml in RLlib's terms (issue #50): 2,048 env steps per iteration,
minibatches of 64 for 10 epochs, MeanStdFilter on observations, rewards scaled on the learner
only, a state-independent log std, no value clip. Builds configs and connector pieces only
(no Ray started, no training: the smoke test trains the file)."""

import gymnasium as gym
import numpy as np
import pytest
from ray.rllib.connectors.env_to_module.mean_std_filter import MeanStdFilter
from ray.rllib.connectors.learner.add_one_ts_to_episodes_and_truncate import (
    AddOneTsToEpisodesAndTruncate,
)
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rl_platform.base.errors import SpecError
from rl_platform.connectors.scale_rewards import ScaleRewards
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.rl_module_spec import module_spec_for
from rl_platform.spec import load_spec
from tests.conftest import EXPERIMENTS

SPEC = EXPERIMENTS / "mujoco_ppo.yaml"
OBS = gym.spaces.Box(-np.inf, np.inf, (11,), np.float32)
ACT = gym.spaces.Box(-1.0, 1.0, (3,), np.float32)


@pytest.mark.parametrize("env", ["Hopper-v5", "HalfCheetah-v5"])
def test_batch_geometry_is_cleanrls(env):
    spec = load_spec(SPEC, overrides=[f"vars.env={env}"])
    assert spec.env.id == env and spec.name == f"mujoco_ppo_{env}"
    config = build_algorithm_config(spec)
    assert config.num_env_runners == 0 and config.num_envs_per_env_runner == 1
    assert config.train_batch_size_per_learner == 2048
    assert config.get_rollout_fragment_length() == 2048  # one fragment = one iteration
    assert (config.minibatch_size, config.num_epochs) == (64, 10)
    assert config.lr == [[0, 3.0e-4], [999424, 0.0]]
    assert (config.gamma, config.lambda_, config.clip_param) == (0.99, 0.95, 0.2)
    assert (config.grad_clip, config.entropy_coeff, config.vf_loss_coeff) == (0.5, 0.0, 0.25)
    assert config.vf_clip_param == float("inf")
    model = module_spec_for(spec).model_config
    assert model.free_log_std and not model.vf_share_layers
    assert (model.fcnet_hiddens, model.fcnet_activation) == ([64, 64], "tanh")


def test_observations_filtered_and_rewards_scaled_by_connectors():
    config = build_algorithm_config(load_spec(SPEC))
    env_to_module = config.build_env_to_module_connector(
        spaces={"__env__": (OBS, ACT), "__env_single__": (OBS, ACT)}
    )
    assert isinstance(env_to_module.connectors[0], MeanStdFilter)
    learner = config.build_learner_connector(input_observation_space=OBS, input_action_space=ACT)
    assert isinstance(learner.connectors[0], ScaleRewards)


def test_scale_rewards_rewrites_the_learners_copy_and_leaves_the_bootstrap_step():
    episode = SingleAgentEpisode(observation_space=OBS, action_space=ACT)
    episode.add_env_reset(observation=OBS.sample())
    for reward in (1.0, 2.0, 3.0):
        episode.add_env_step(observation=OBS.sample(), action=ACT.sample(), reward=reward)
    episode.to_numpy()
    batch: dict = {}
    episodes = [episode]
    AddOneTsToEpisodesAndTruncate()(rl_module=None, batch=batch, episodes=episodes, shared_data={})
    ScaleRewards(gamma=0.99)(rl_module=None, batch=batch, episodes=episodes)
    [learners] = episodes  # what the pieces after this one read: a copy
    rewards = learners.get_rewards()
    sums = np.array([1.0, 0.99 + 2.0, 0.99 * 2.99 + 3.0])
    assert rewards[:3] == pytest.approx(np.array([1.0, 2.0, 3.0]) / sums.std(), rel=1e-3)
    assert rewards[3] == 0.0
    # The env runner's own object (a local runner's, reported as the episode's return) keeps
    # the env's rewards.
    assert learners is not episode and list(episode.get_rewards()) == [1.0, 2.0, 3.0, 0.0]


def test_the_normalisers_are_refused_where_they_cannot_act():
    with pytest.raises(SpecError, match="normalize_rewards is a PPO setting"):
        load_spec(SPEC, overrides=["algo=APPO", "~training.vf_clip_param"])
    with pytest.raises(SpecError, match="observation_filter mean_std is an RLlib"):
        load_spec(EXPERIMENTS / "duel_selfplay.yaml", overrides=["env.observation_filter=mean_std"])
