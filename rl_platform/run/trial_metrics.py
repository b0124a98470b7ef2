"""The end-of-run summary in SLM-Lab's `trial_metrics:` convention (existing scripts grep it)."""

import math
import time
from typing import Any

from rl_platform.utils.console_text import shown

WALL_S_DECIMALS = 2
"""`wall_s` is written and shown with this many decimals: `5.00` beside `3.93`, not `5` beside
`3.93` (4 significant digits drop a whole number's decimals)."""


class TrialMetrics:
    def __init__(self, *, start_env_steps: int = 0) -> None:
        """`start_env_steps`: where this process began (a resumed run's checkpoint), so the
        rate counts only the env steps it trained itself."""
        self.started = time.monotonic()
        self.start_env_steps = start_env_steps
        self.last_return: float | None = None
        self.best_return: float | None = None

    def observe(self, metrics: dict[str, float]) -> None:
        value = metrics.get("train/episode_return_mean")
        if value is None or not math.isfinite(value):
            return
        self.last_return = value
        self.best_return = value if self.best_return is None else max(self.best_return, value)

    def summary(self, *, env_steps: int, iterations: int) -> dict[str, Any]:
        wall_s = time.monotonic() - self.started
        trained = env_steps - self.start_env_steps
        return {
            "frame": env_steps,
            "total_reward_ma": self.last_return,
            "best_total_reward_ma": self.best_return,
            "iterations": iterations,
            "wall_s": round(wall_s, WALL_S_DECIMALS),
            "env_steps_per_s": round(trained / wall_s, 1) if wall_s > 0 else None,
        }

    @staticmethod
    def format_line(summary: dict[str, Any]) -> str:
        def fmt(key: str, value: Any) -> str:
            if key == "wall_s" and isinstance(value, float):
                return f"{value:.{WALL_S_DECIMALS}f}"
            return shown(value)

        return " | ".join(f"{key}:{fmt(key, value)}" for key, value in summary.items())
