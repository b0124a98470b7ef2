"""How values read in rlp's lines and tables (`utils/console_text.py`) and the training
progress line built from them (`run/progress.py`)."""

import math

import pytest
from loguru import logger

from rl_platform.run.progress import ProgressLine
from rl_platform.spec.sections import StopSpec
from rl_platform.utils.console_text import duration_text, rate_text, shown


@pytest.mark.parametrize(
    ("value", "text"),
    [(0.000563712, "0.0005637"), (25.8412, "25.84"), (None, "-"), (3, "3"), ("mse", "mse")],
)
def test_shown(value: object, text: str) -> None:
    assert shown(value) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (247.9, "4m07s"),
        (3 * 3600 + 2 * 60 + 59, "3h02m"),
        (11 * 86400 + 4 * 3600 + 5, "11d04h"),
        (None, "?"),
        (math.inf, "?"),
    ],
)
def test_duration_text(seconds: float | None, text: str) -> None:
    assert duration_text(seconds) == text


def _progress_line(metrics: dict[str, float]) -> str:
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message).strip()), format="{message}")
    try:
        ProgressLine("duel", StopSpec(env_steps=10_000_000)).update(metrics)
    finally:
        logger.remove(sink)
    assert len(lines) == 1, lines
    return lines[0]


def test_an_iteration_without_an_ended_episode_shows_a_dash_and_a_long_eta_in_hours() -> None:
    line = _progress_line(
        {
            "iteration": 734,
            "env_steps": 3_006_464,
            "train/episode_return_mean": math.nan,
            "perf/env_steps_per_s": 250.0,
        }
    )
    assert "| return - |" in line and "nan" not in line
    assert "ETA 7h46m" in line  # (10M - 3,006,464) / 250 = 27,974 s


def test_an_iteration_with_episodes_shows_their_return() -> None:
    line = _progress_line({"iteration": 2, "env_steps": 8_192, "train/episode_return_mean": -8.25})
    assert "env steps 8,192 | return -8.2 |" in line


@pytest.mark.parametrize(
    ("rate", "text"), [(4328.4, "4,328"), (10.0, "10"), (0.44, "0.44"), (0.0, "0")]
)
def test_a_slow_rate_keeps_its_digits(rate: float, text: str) -> None:
    assert rate_text(rate) == text


def test_the_eval_table_says_reward_components_are_unweighted_sums() -> None:
    from rich.console import Console

    from rl_platform.commands.evaluation import _table

    console = Console(width=120, record=True)
    console.print(
        _table("t", {"return_mean": 0.08, "reward_components": {"time_penalty": -1151.0}})
    )
    text = console.export_text()
    assert "reward_components (unweighted sums)" in text and "time_penalty=-1151" in text
    assert "return_mean" in text and "0.08" in text
