"""The end-of-run summary's rate counts only what this process trained."""

import pytest

from rl_platform.run import trial_metrics
from rl_platform.run.trial_metrics import TrialMetrics


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    now = [100.0]
    monkeypatch.setattr(trial_metrics.time, "monotonic", lambda: now[0])
    return now


def test_a_fresh_run_counts_every_env_step(clock: list[float]) -> None:
    trial = TrialMetrics()
    clock[0] += 10.0
    assert trial.summary(env_steps=5_000, iterations=5)["env_steps_per_s"] == 500.0


def test_a_resumed_run_counts_only_the_env_steps_after_its_checkpoint(clock: list[float]) -> None:
    trial = TrialMetrics(start_env_steps=2_846_720)
    clock[0] += 467.0
    summary = trial.summary(env_steps=3_002_368, iterations=733)
    assert summary["frame"] == 3_002_368
    assert summary["env_steps_per_s"] == pytest.approx(155_648 / 467.0, abs=0.1)


def test_the_returns_keep_the_last_and_the_best(clock: list[float]) -> None:
    trial = TrialMetrics()
    for value in (1.0, 5.0, float("nan"), 3.0):
        trial.observe({"train/episode_return_mean": value})
    summary = trial.summary(env_steps=1, iterations=4)
    assert (summary["total_reward_ma"], summary["best_total_reward_ma"]) == (3.0, 5.0)


def test_wall_s_keeps_its_decimal_in_the_line(clock: list[float]) -> None:
    # 4 significant digits alone would show `wall_s:5` beside another run's `wall_s:3.93`.
    trial = TrialMetrics()
    trial.observe({"train/episode_return_mean": 30.46})
    clock[0] += 4.997
    summary = trial.summary(env_steps=8_024, iterations=2)
    assert summary["wall_s"] == 5.0
    assert TrialMetrics.format_line(summary) == (
        "frame:8024 | total_reward_ma:30.46 | best_total_reward_ma:30.46 | iterations:2 | "
        "wall_s:5.00 | env_steps_per_s:1606"
    )
