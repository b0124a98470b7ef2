"""`training.replay`: SAC samples its replay uniformly, as its paper and the published results
do (RLlib's own SAC default is prioritized); DQN keeps Rainbow's prioritized replay. RLlib's
own path (`training.learner: rllib`); builds configs only (no Ray started)."""

import pytest

from rl_platform.rllib.config import build_algorithm_config
from rl_platform.spec import load_spec
from tests.conftest import EXPERIMENTS


@pytest.mark.parametrize(
    ("spec_file", "overrides", "buffer"),
    [
        ("mujoco_hopper_sac.yaml", [], "EpisodeReplayBuffer"),
        ("pendulum_sac.yaml", [], "EpisodeReplayBuffer"),
        ("pendulum_sac.yaml", ["training.replay=prioritized"], "PrioritizedEpisodeReplayBuffer"),
        ("cartpole_dqn.yaml", [], "PrioritizedEpisodeReplayBuffer"),
        ("cartpole_dqn.yaml", ["training.replay=uniform"], "EpisodeReplayBuffer"),
    ],
)
def test_the_replay_buffer_follows_training_replay(spec_file, overrides, buffer):
    spec = load_spec(EXPERIMENTS / spec_file, overrides=[*overrides, "training.learner=rllib"])
    replay = build_algorithm_config(spec).replay_buffer_config
    assert replay["type"] == buffer
    assert replay["capacity"] == spec.training.replay_capacity
    if buffer.startswith("Prioritized"):  # RLlib's prioritisation settings are kept
        assert (replay["alpha"], replay["beta"]) == (0.6, 0.4)
    else:
        assert "alpha" not in replay and "beta" not in replay
