"""The off-policy array path (docs/off_policy.md) trains every shipped SAC/DQN spec: each runs
its `smoke` profile on the replay store with updates in both iterations, logs RLlib's metric
keys, reports its updates as `perf/learn_s`, and checkpoints our module's nets; and DQN learns
CartPole within an env-step budget."""

import pytest

from rl_platform import load_spec, train
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.storage.checkpoints import load_checkpoint
from tests.conftest import EXPERIMENTS

OFF_POLICY_SPECS = ["pendulum_sac.yaml", "mujoco_hopper_sac.yaml", "cartpole_dqn.yaml"]
QUIET = ["logging.wandb=off", "logging.tensorboard=false"]


@pytest.mark.parametrize("spec_file", OFF_POLICY_SPECS)
def test_every_shipped_spec_trains_on_the_replay_store(ray_local, tmp_path, spec_file):
    overrides = [*QUIET, "training.num_steps_sampled_before_learning_starts=50"]
    spec = load_spec(EXPERIMENTS / spec_file, profile="smoke", overrides=overrides)
    assert spec.learner_choice().kind == "array"
    result = train(spec, out_dir=tmp_path)
    last = result.history[-1]
    assert last["health/nonfinite_update"] == 0.0 and "train/qf_loss" in last
    # updates are learning time, acting is sampling time (rl_platform/run/phase_clock.py)
    assert last["perf/learn_s"] > 0 and last["perf/sample_s"] > 0
    state = load_checkpoint(result.last_checkpoint).parts[ALGORITHM_PART]
    (weights,) = module_weights(state).values()
    net = "actor" if spec.algo == "SAC" else "q_net"
    assert any(name.startswith(f"{net}.") for name in weights), sorted(weights)


@pytest.mark.slow
def test_dqn_learns_cartpole_within_its_budget(ray_local, tmp_path):
    overrides = [*QUIET, "stop.return_mean=150", "stop.env_steps=40000", "checkpoint.at_end=false"]
    spec = load_spec(EXPERIMENTS / "cartpole_dqn.yaml", overrides=overrides)
    result = train(spec, out_dir=tmp_path)
    assert result.stop_reason.startswith("return_mean"), result.stop_reason
    assert result.env_steps <= 40000
