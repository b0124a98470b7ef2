"""`bc.replay` in a real training loop (CartPole, local Ray, tiny budget): every labelled step
the env runners produce lands in the learner's replay, capped at its capacity, and the replayed
BC steps report their loss and accuracy (`loss/bc_replay`, `bc/replay_accuracy`). Once the
schedule takes `coef` to 0 the metrics stay finite (a NaN there stopped `rlp train` as a NaN
loss)."""

import math

from rl_platform.bc.extension import bc_extension
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.run.metrics import extract_metrics, is_nonfinite_update
from rl_platform.spec import ExperimentSpec

CAPACITY = 300


def test_replay_aggregates_every_labelled_step_up_to_capacity(ray_local):
    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_replay",
            "seed": 0,
            "env": {"id": "CartPole-v1", "envs_per_runner": 2},
            "model": {"hidden": [8]},
            "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
            "bc": {
                "teacher": "scripted://cartpole/balance",
                "teacher_led": 0.5,
                "student_led": 0.5,
                "replay": {"capacity": CAPACITY, "updates_per_minibatch": 2},
                "schedule": {"kind": "linear", "until_env_steps": 400, "coef": 0.0},
            },
        }
    )
    algo = build_algorithm_config(spec, extensions=[bc_extension]).build_algo()
    try:
        env_steps, history = 0, []
        for _ in range(3):
            metrics = extract_metrics(algo.train(), previous_env_steps=env_steps)
            env_steps = int(metrics["env_steps"])
            history.append(metrics)
    finally:
        algo.stop()

    first, second, third = history
    # Both slices are labelled, so every sampled step is a labelled learner step.
    assert first["bc/replay_steps"] == first["env_steps"] < CAPACITY
    assert second["bc/replay_steps"] == min(CAPACITY, second["env_steps"]) == CAPACITY
    for metrics in (first, second):
        assert metrics["bc/coef"] > 0.0
        assert math.isfinite(metrics["loss/bc_replay"]) and metrics["loss/bc_replay"] > 0.0
    # After the schedule's end: no replay steps, the weighted loss is 0, nothing is NaN.
    assert third["bc/coef"] == 0.0 and third["loss/bc_replay"] == 0.0
    assert third["bc/replay_steps"] == CAPACITY
    for metrics in history:
        assert 0.0 <= metrics["bc/replay_accuracy"] <= 1.0
        assert not is_nonfinite_update(metrics)
