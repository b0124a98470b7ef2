"""The encoder benchmark's answer (issue #43): bootstrap intervals over seeds and the
differences it reads on the hidden-intent set, from hand-made rows (no training)."""

import numpy as np

from benchmarks.common.intent_report import differences, mean_and_interval
from benchmarks.common.spread import bootstrap_interval
from benchmarks.common.style_arena import HISTORY_CUT, MEMORY_CUT

KEY = "greedy/mean/hidden_intent"


def test_the_bootstrap_interval_brackets_the_mean_and_needs_two_seeds() -> None:
    assert bootstrap_interval([0.4]) is None
    assert bootstrap_interval([0.3, 0.3, 0.3]) == (0.3, 0.3)
    low, high = bootstrap_interval([0.1, 0.2, 0.6, 0.7, 0.9])
    assert 0.1 < low < np.mean([0.1, 0.2, 0.6, 0.7, 0.9]) < high < 0.9
    assert mean_and_interval([0.5]) == "0.50 [1 seed]"
    assert mean_and_interval([-0.2, 0.1], signed=True).startswith("-0.05 [-0.")


def test_differences_pair_each_model_with_its_cut_per_seed() -> None:
    seeds = [
        {"transformer_lstm": 0.7, HISTORY_CUT: 0.4, "lstm": 0.5, MEMORY_CUT: 0.45},
        {"transformer_lstm": 0.6, HISTORY_CUT: 0.5, "lstm": 0.7},
    ]
    rows = [{name: {KEY: value} for name, value in seed.items()} for seed in seeds]
    got = differences(rows, mode="greedy")
    np.testing.assert_allclose(got["(c) - (c0)"], [0.3, 0.1])
    np.testing.assert_allclose(got["(b) - (b0)"], [0.05])  # seed 1 has no (b0) row
    np.testing.assert_allclose(got["(c) - (b)"], [0.2, -0.1])
