"""The live progress line: iteration, env steps, return mean, env steps/s, ETA and where the
iteration's time went (rich)."""

import math
import sys
import time

from loguru import logger
from rich.console import Console
from rich.live import Live
from rich.text import Text

from rl_platform.run.phase_clock import split_summary
from rl_platform.spec.sections import StopSpec


def estimate_eta_s(
    *,
    stop: StopSpec,
    iteration: int,
    env_steps: int,
    steps_per_s: float,
    s_per_iter: float,
    elapsed_s: float,
) -> float | None:
    """Seconds to the nearest budget stop (env steps, iterations, minutes); None if unknown."""
    candidates = []
    if stop.env_steps and steps_per_s > 0:
        candidates.append(max(0.0, (stop.env_steps - env_steps) / steps_per_s))
    if stop.iterations and s_per_iter > 0:
        candidates.append(max(0.0, (stop.iterations - iteration) * s_per_iter))
    if stop.minutes:
        candidates.append(max(0.0, stop.minutes * 60 - elapsed_s))
    return min(candidates) if candidates else None


def _format_eta(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


class ProgressLine:
    """A single refreshing line on a terminal; a log line per iteration elsewhere (CI, jobs)."""

    def __init__(self, name: str, stop: StopSpec) -> None:
        self.name, self.stop = name, stop
        self.started = time.monotonic()
        self.console = Console(stderr=True)
        self._live = Live(console=self.console, transient=False) if sys.stderr.isatty() else None
        if self._live is not None:
            self._live.start()

    def update(self, metrics: dict[str, float]) -> None:
        iteration, steps = int(metrics["iteration"]), int(metrics["env_steps"])
        rate = metrics.get("perf/env_steps_per_s", 0.0)
        eta = estimate_eta_s(
            stop=self.stop,
            iteration=iteration,
            env_steps=steps,
            steps_per_s=rate,
            s_per_iter=metrics.get("perf/iteration_s", 0.0),
            elapsed_s=time.monotonic() - self.started,
        )
        ret = metrics.get("train/episode_return_mean", float("nan"))
        line = (
            f"{self.name} | iter {iteration} | env steps {steps:,} | return {ret:.1f} | "
            f"{rate:,.0f} steps/s | ETA {_format_eta(eta)}"
        )
        split = split_summary(metrics)
        if split:
            line += f" | {split}"
        if self._live is not None:
            self._live.update(Text(line))
        else:
            logger.info(line)

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()
