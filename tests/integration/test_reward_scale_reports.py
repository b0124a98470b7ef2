"""`training.normalize_rewards` scales what the learner learns from, never what is reported.
With a local env runner (`env_runners: 0`, as experiments/mujoco_ppo.yaml runs) the learner is
handed the runner's own episode objects; the piece once scaled their rewards in place, so an
episode cut by an iteration boundary was reported with its earlier chunks' rewards scaled:
on an env whose every episode returns exactly 100, `train/episode_return_mean` fell in a
sawtooth (1000-step episodes in 2,048-step iterations: 1000, 977, 954, ..., 567, then back).
"""

from rl_platform import load_spec, train
from rl_platform.storage.metrics_rows import read_metrics
from tests.conftest import EXPERIMENTS

LENGTH = 100
SCALED = [
    "env.id=tests.fixtures.constant_reward_env:ConstantReward",
    f"env.kwargs={{length: {LENGTH}}}",
    "training.train_batch_size=256",  # 2.56 episodes an iteration: most are cut
    "training.minibatch_size=256",
    "training.num_epochs=1",
    "training.lr_schedule=null",
    "stop.iterations=5",
    "stop.env_steps=null",
    "checkpoint.every_iterations=1000",
    "logging.wandb=off",
    "logging.tensorboard=false",
]


def test_scaled_rewards_leave_the_reported_returns_alone(ray_local, tmp_path):
    spec = load_spec(EXPERIMENTS / "mujoco_ppo.yaml", overrides=SCALED)
    assert spec.training.normalize_rewards and spec.resources.env_runners == 0
    rows = read_metrics(train(spec, out_dir=tmp_path).run_dir)
    assert len(rows) == 5
    assert [row["train/episode_return_mean"] for row in rows] == [float(LENGTH)] * 5
