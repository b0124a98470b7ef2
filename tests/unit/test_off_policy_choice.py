"""SAC/DQN's `training.learner` (rl_platform/spec/learner_choice.py, the off-policy array path)
and the update rate on it (`updates_per_env_step`, DQN's `training_intensity`)."""

import pytest

from rl_platform.base.errors import SpecError
from rl_platform.spec import validate_spec_data


def _spec(algo: str, **extra):
    env = {"id": "Pendulum-v1"} if algo == "SAC" else {"id": "CartPole-v1", "envs_per_runner": 4}
    data = {"name": "off_policy_choice", "algo": algo, "env": env}
    for key, value in extra.items():
        data[key] = {**data.get(key, {}), **value}
    return validate_spec_data(data)


@pytest.mark.parametrize("algo", ["SAC", "DQN"])
def test_auto_picks_the_replay_store(algo) -> None:
    choice = _spec(algo).learner_choice()
    assert choice.kind == "array" and "replay store" in choice.reason


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({"env": {"observation_filter": "mean_std"}}, "env.observation_filter"),
        ({"resources": {"env_runners": 1}}, "resources.env_runners 1"),
        ({"resources": {"learners": 1}}, "resources.learners 1"),
        ({"model": {"type": "lstm", "lstm_cell_size": 8, "max_seq_len": 4}}, "model.type lstm"),
    ],
)
@pytest.mark.parametrize("algo", ["SAC", "DQN"])
def test_auto_falls_back_to_rllib_and_array_refuses_in_one_line(algo, extra, reason) -> None:
    choice = _spec(algo, **extra).learner_choice()
    assert choice.kind == "rllib" and reason in choice.reason
    with pytest.raises(SpecError, match=f"training.learner array cannot train.*{reason}"):
        _spec(algo, training={"learner": "array"}, **extra)


@pytest.mark.parametrize("algo", ["SAC", "DQN"])
def test_rllib_is_honoured(algo) -> None:
    assert _spec(algo, training={"learner": "rllib"}).learner_choice().kind == "rllib"


def test_sac_updates_once_per_env_step_by_default() -> None:
    assert _spec("SAC").training.update_rate(1) == 1.0
    assert _spec("SAC", training={"updates_per_env_step": 0.5}).training.update_rate(1) == 0.5


def test_dqn_keeps_rllibs_rate_or_maps_training_intensity() -> None:
    # RLlib's natural rate: one update per vector step (4 copies: 0.25 per env step).
    assert _spec("DQN").training.update_rate(4) == 0.25
    # training_intensity = replayed / sampled steps = updates per env step * batch size.
    intense = _spec("DQN", training={"training_intensity": 64.0, "train_batch_size": 32})
    assert intense.training.update_rate(4) == 2.0
    assert _spec("DQN", training={"updates_per_env_step": 1.0}).training.update_rate(4) == 1.0
    with pytest.raises(SpecError, match="pick one"):
        _spec("DQN", training={"training_intensity": 8.0, "updates_per_env_step": 1.0})


def test_checkpoint_replay_is_on_by_default() -> None:
    assert _spec("SAC").checkpoint.replay is True
    assert _spec("SAC", checkpoint={"replay": False}).checkpoint.replay is False
