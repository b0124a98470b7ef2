"""RLlib result dict -> namespaced metrics (pure)."""

import math

from rl_platform.run.metrics import extract_metrics, is_nonfinite_update
from rl_platform.run.stopping import StopTracker
from rl_platform.spec.sections import CheckpointSpec, StopSpec

RESULT = {
    "training_iteration": 3,
    "num_env_steps_sampled_lifetime": 6000,
    "time_this_iter_s": 2.0,
    "env_runners": {
        "episode_return_mean": 120.5,
        "episode_len_mean": 120.5,
        "num_episodes": 17,
        "reward/damage_dealt": 3.0,
        "actions/1_frac": 0.25,
    },
    "learners": {
        "__all_modules__": {"health/nonfinite_update": 0.0},
        "default_policy": {
            "entropy": 0.6,
            "approx_kl": 0.01,
            "clip_frac": 0.1,
            "policy_loss": -0.02,
            "vf_loss": 3.0,
            "vf_explained_var": 0.5,
            "default_optimizer_learning_rate": 3e-4,
        },
    },
}


def test_extract_names_and_throughput():
    m = extract_metrics(RESULT, previous_env_steps=4000)
    assert m["train/episode_return_mean"] == 120.5 and m["train/num_episodes"] == 17
    assert m["train/entropy"] == 0.6 and m["train/clip_frac"] == 0.1 and m["train/lr"] == 3e-4
    assert m["perf/env_steps_per_s"] == 1000.0 and m["perf/iteration_s"] == 2.0
    assert m["reward/damage_dealt"] == 3.0 and m["actions/1_frac"] == 0.25
    assert not is_nonfinite_update(m)


def test_nonfinite_detection():
    assert is_nonfinite_update({"health/nonfinite_update": 1.0})
    assert is_nonfinite_update({"train/vf_loss": math.nan})


def test_first_stop_condition_wins():
    tracker = StopTracker(StopSpec(iterations=10, return_mean=100.0), CheckpointSpec())
    assert (
        tracker.stop_reason({"iteration": 3, "env_steps": 10, "train/episode_return_mean": 50})
        is None
    )
    reason = tracker.stop_reason(
        {"iteration": 3, "env_steps": 10, "train/episode_return_mean": 101}
    )
    assert reason == "return_mean >= 100.0"
    assert tracker.stop_reason({"iteration": 10, "env_steps": 10}) == "iterations >= 10"


def test_checkpoint_cadence():
    tracker = StopTracker(StopSpec(iterations=10), CheckpointSpec(every_iterations=3))
    assert [i for i in range(1, 10) if tracker.checkpoint_due(i)] == [3, 6, 9]
