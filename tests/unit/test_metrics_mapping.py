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
        "action_counts": {"0": 30, "1": 10},
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
    assert m["loss/policy"] == -0.02 and m["loss/value"] == 3.0
    assert m["reward/damage_dealt"] == 3.0
    assert m["actions/0_frac"] == 0.75 and m["actions/1_frac"] == 0.25
    assert not is_nonfinite_update(m)


LEAGUE_RESULT = {
    "training_iteration": 1,
    "num_env_steps_sampled_lifetime": 4000,
    "time_this_iter_s": 1.0,
    "env_runners": {
        "episode_return_mean": -0.1,  # both seats summed: about 0 in a zero-sum game
        "learner_episode_return_mean": 2.5,
        "module_episode_returns_mean": {"main": 2.5, "opponent_0": -2.0, "scripted_based": -3.1},
        "action_counts": {"3": 5, "7": 15},
    },
    "learners": {"main": {"entropy": 1.2}},
}


def test_league_runs_report_the_trained_modules_own_return_and_the_others_apart():
    m = extract_metrics(LEAGUE_RESULT, previous_env_steps=0)
    assert m["train/episode_return_mean"] == 2.5
    assert m["league/return_mean/opponent_0"] == -2.0
    assert m["league/return_mean/scripted_based"] == -3.1
    assert "league/return_mean/main" not in m


def test_action_fractions_use_the_envs_names_and_sum_to_one():
    names = ("idle", "left", "right", "jump", "dash", "light", "heavy", "block", "down", "grab")
    m = extract_metrics(LEAGUE_RESULT, previous_env_steps=0, action_names=names)
    fractions = {k: v for k, v in m.items() if k.startswith("actions/")}
    assert set(fractions) == {f"actions/{name}_frac" for name in names}
    assert fractions["actions/jump_frac"] == 0.25 and fractions["actions/block_frac"] == 0.75
    assert fractions["actions/idle_frac"] == 0.0
    assert math.isclose(sum(fractions.values()), 1.0)


def test_nonfinite_detection():
    assert is_nonfinite_update({"health/nonfinite_update": 1.0})
    assert is_nonfinite_update({"loss/value": math.nan})
    # An iteration in which no duel game ended: its reward components have no value.
    assert not is_nonfinite_update({"reward/win_loss": math.nan, "loss/value": 0.1})


def test_stale_learner_keys_of_a_resumed_checkpoint_neither_mask_nor_stop_training():
    # A checkpoint written before #58 holds stats for `loss/policy` and `loss/entropy`, which
    # the learner no longer logs: RLlib reduces them to NaN after the resume.
    learners = {
        "__all_modules__": {"health/nonfinite_update": 0.0},
        "main": {"policy_loss": 0.02, "loss/policy": math.nan, "loss/entropy": math.nan},
    }
    m = extract_metrics(RESULT | {"learners": learners}, previous_env_steps=0)
    assert m["loss/policy"] == 0.02 and "loss/entropy" not in m
    assert not is_nonfinite_update(m)


def test_a_nonfinite_mapped_loss_still_stops_training():
    learners = {"main": {"policy_loss": math.nan, "loss/bc": 0.3}}
    m = extract_metrics(RESULT | {"learners": learners}, previous_env_steps=0)
    assert math.isnan(m["loss/policy"]) and m["loss/bc"] == 0.3
    assert is_nonfinite_update(m)


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
