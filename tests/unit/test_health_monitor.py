"""Health checks on by default (pure): an entropy floor scaled to the action space, warnings
for oversized updates, dead reward terms."""

import math

import gymnasium as gym
import pytest
from loguru import logger

from rl_platform.run.health import REPEAT_WARNING_EVERY, HealthMonitor, HealthStatus, max_entropy
from rl_platform.spec.sections import HealthSpec


def test_the_default_floor_is_a_share_of_the_maximum_entropy():
    assert max_entropy(gym.spaces.Discrete(10)) == pytest.approx(math.log(10))
    assert max_entropy(gym.spaces.MultiDiscrete([2, 3])) == pytest.approx(math.log(6))
    assert max_entropy(gym.spaces.Box(-1, 1, (2,))) is None  # continuous: no maximum
    monitor = HealthMonitor(HealthSpec(), max_entropy=math.log(10))
    assert monitor.entropy_floor == pytest.approx(0.02 * math.log(10))
    assert monitor.check({"train/entropy": 0.5}).status is HealthStatus.OK
    metrics = {"train/entropy": 0.01}
    verdict = monitor.check(metrics)
    assert verdict.status is HealthStatus.COLLAPSED and "min_entropy_fraction" in verdict.reason
    assert metrics["health/entropy_collapse"] == 1.0


def test_an_explicit_floor_wins_and_a_zero_fraction_turns_the_default_off():
    explicit = HealthMonitor(HealthSpec(min_entropy=0.3), max_entropy=math.log(10))
    assert explicit.check({"train/entropy": 0.2}).status is HealthStatus.COLLAPSED
    off = HealthMonitor(HealthSpec(min_entropy_fraction=0.0), max_entropy=math.log(10))
    assert off.check({"train/entropy": 0.0}).status is HealthStatus.OK
    continuous = HealthMonitor(HealthSpec(), max_entropy=None)
    assert continuous.check({"train/entropy": -5.0}).status is HealthStatus.OK


def test_oversized_updates_are_flagged_with_the_reference_defaults():
    monitor = HealthMonitor(HealthSpec(), max_entropy=None)
    calm = {"train/approx_kl": 0.02, "train/clip_frac": 0.1}
    monitor.check(calm)
    assert "health/approx_kl_high" not in calm and "health/clip_frac_high" not in calm
    wild = [{"train/approx_kl": 0.07, "train/clip_frac": 0.31} for _ in range(2)]
    assert monitor.check(wild[0]).status is HealthStatus.OK  # a warning, not a stop
    assert wild[0]["health/approx_kl_high"] == 1.0 and "health/clip_frac_high" not in wild[0]
    monitor.check(wild[1])  # the clip fraction counts from its second iteration in a row
    assert wild[1]["health/approx_kl_high"] == 1.0 and wild[1]["health/clip_frac_high"] == 1.0


def _logged_warnings(monitor: HealthMonitor, rows: list[dict[str, float]]) -> list[str]:
    logged: list[str] = []
    sink = logger.add(logged.append, level="WARNING", format="{message}")
    try:
        for metrics in rows:
            monitor.check(metrics)
    finally:
        logger.remove(sink)
    return logged


def test_a_lasting_oversized_update_is_flagged_every_time_but_logged_once_per_streak():
    values = [0.1] * (REPEAT_WARNING_EVERY + 1) + [0.01, 0.1]
    rows = [{"train/approx_kl": value} for value in values]
    logged = _logged_warnings(HealthMonitor(HealthSpec(), max_entropy=None), rows)
    assert [row.get("health/approx_kl_high", 0.0) for row in rows] == [
        1.0 if v > 0.06 else 0.0 for v in values
    ]
    # The streak's start, its reminder after REPEAT_WARNING_EVERY, and the new streak.
    assert len(logged) == 3
    assert f"{REPEAT_WARNING_EVERY + 1} iterations in a row" in logged[1]


def test_one_minibatch_clipping_much_is_not_a_finding_until_it_repeats():
    # RLlib reports the last minibatch's clip fraction: cartpole_ppo.yaml (seed 0) clipped 0.38
    # in its first iteration and <= 0.07 after; a lasting 0.4 is flagged from its 2nd iteration.
    values = [0.38, 0.07, 0.4, 0.4, 0.4]
    rows = [{"train/clip_frac": value} for value in values]
    logged = _logged_warnings(HealthMonitor(HealthSpec(), max_entropy=None), rows)
    assert [row.get("health/clip_frac_high", 0.0) for row in rows] == [0, 0, 0, 1.0, 1.0]
    assert len(logged) == 1 and "2 iterations in a row" in logged[0]
    once = HealthMonitor(HealthSpec(clip_frac_iterations=1), max_entropy=None)
    assert _logged_warnings(once, [{"train/clip_frac": 0.38}])


def test_update_size_is_not_judged_while_a_bc_term_pulls_the_policy():
    # duel_bc_ppo.yaml's first iteration: the BC term moved the policy far from its behaviour
    # policy (KL 3.4, clip fraction 0.97); without `bc:` it was 0.008 and 0.08.
    monitor = HealthMonitor(HealthSpec(), max_entropy=None)
    pulled = {"bc/coef": 1.0, "train/approx_kl": 3.4, "train/clip_frac": 0.97}
    plain = {"bc/coef": 0.0, "train/approx_kl": 0.07, "train/clip_frac": 0.97}
    assert _logged_warnings(monitor, [pulled]) == []
    assert "health/approx_kl_high" not in pulled and "health/clip_frac_high" not in pulled
    assert len(_logged_warnings(monitor, [plain])) == 1  # KL; the clip streak starts anew
    assert plain["health/approx_kl_high"] == 1.0 and "health/clip_frac_high" not in plain


def test_a_reward_term_stuck_at_zero_is_flagged_after_k_iterations():
    monitor = HealthMonitor(HealthSpec(zero_reward_iterations=3), max_entropy=None)
    flags = []
    for value in (0.0, 0.0, 0.0, 0.0, 0.5, 0.0):
        metrics = {"reward/knockout": value, "reward/damage_dealt": 0.2}
        monitor.check(metrics)
        flags.append(metrics.get("health/reward_zero/knockout", 0.0))
        assert "health/reward_zero/damage_dealt" not in metrics
    assert flags == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]  # the streak restarts after a non-zero


def test_nan_comes_first():
    monitor = HealthMonitor(HealthSpec(), max_entropy=math.log(2))
    metrics = {"train/entropy": 0.0, "loss/total": float("nan")}
    assert monitor.check(metrics).status is HealthStatus.NAN
