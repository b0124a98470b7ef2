"""`training.normalize_rewards`'s rule (rl_platform/connectors/return_scale.py) by hand."""

import numpy as np
import pytest

from rl_platform.connectors.return_scale import REWARD_CLIP, ReturnScale


def test_rewards_divided_by_the_discounted_returns_spread():
    rule = ReturnScale(gamma=0.5)
    scaled = rule.scale(np.array([1.0, 2.0]), episode="a", terminated=False)
    # discounted sums 1, 0.5 * 1 + 2 = 2.5: variance 0.5625 (gymnasium's prior count 1e-4 is
    # all but nothing), std 0.75
    assert rule.std() == pytest.approx(0.75, rel=1e-3)
    assert scaled == pytest.approx([1.0 / 0.75, 2.0 / 0.75], rel=1e-3)
    assert scaled.dtype == np.float32


def test_an_episode_cut_by_the_rollout_carries_its_sum_into_the_next_batch():
    rule = ReturnScale(gamma=0.5)
    rule.scale(np.array([1.0, 2.0]), episode="a", terminated=False)
    rule.end_batch()
    rule.scale(np.array([4.0]), episode="a", terminated=True)
    # sums seen: 1, 2.5, then 0.5 * 2.5 + 4 = 5.25 (carried), not 4 (restarted)
    assert rule.std() == pytest.approx(np.std([1.0, 2.5, 5.25]), rel=1e-3)


def test_a_terminated_or_vanished_episode_starts_again_from_zero():
    rule = ReturnScale(gamma=0.5)
    rule.scale(np.array([1.0, 2.0]), episode="a", terminated=True)
    rule.scale(np.array([1.0, 2.0]), episode="b", terminated=False)
    rule.end_batch()
    rule.end_batch()  # "b" had no chunk in the last batch: it ended (a time limit)
    rule.scale(np.array([1.0]), episode="b", terminated=False)
    assert rule.std() == pytest.approx(np.std([1.0, 2.5, 1.0, 2.5, 1.0]), rel=1e-3)


def test_scaled_rewards_are_clipped():
    rule = ReturnScale(gamma=0.0)  # the sums are the rewards themselves
    rule.scale(np.zeros(10_000), episode="a", terminated=True)
    # 50 among 10,001 samples: std ~0.5, so 50 scales to ~100 and -0.01 to ~-0.02
    scaled = rule.scale(np.array([50.0]), episode="b", terminated=True)
    assert scaled.tolist() == [REWARD_CLIP]
    assert rule.scale(np.array([-1000.0]), episode="c", terminated=True).tolist() == [-REWARD_CLIP]


def test_a_restored_rule_scales_as_the_one_it_was_taken_from():
    """A resume keeps the running statistics (learners/connector_state.py)."""
    rule = ReturnScale(gamma=0.5)
    rule.scale(np.array([1.0, 2.0, -3.0]), episode="a", terminated=True)
    rule.end_batch()
    resumed = ReturnScale(gamma=0.5)
    resumed.restore(rule.state())
    assert resumed.state() == rule.state() and resumed.std() == rule.std()
    chunk = np.array([0.5, 4.0])
    assert resumed.scale(chunk, episode="b", terminated=True).tolist() == (
        rule.scale(chunk, episode="b", terminated=True).tolist()
    )
    assert ReturnScale(gamma=0.5).std() != rule.std()  # what a resume lost before


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"mean": "x", "var": 1.0, "count": 1.0},
        {"mean": 0.0, "var": -1.0, "count": 1.0},
        {"mean": 0.0, "var": 1.0, "count": 0.0},
        {"mean": float("nan"), "var": 1.0, "count": 1.0},
        [1, 2, 3],
    ],
)
def test_a_restore_refuses_what_is_not_the_statistics(state):
    with pytest.raises(ValueError, match="reward-scale statistics"):
        ReturnScale(gamma=0.5).restore(state)
