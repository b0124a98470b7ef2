"""The progress line: iteration, env steps, return mean, env steps/s, ETA and where the
iteration's time went; on a terminal a live rich display with a bar to the nearest stop."""

import math
import sys
import time

from loguru import logger
from rich.console import Group
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from rl_platform.run.phase_clock import split_summary
from rl_platform.spec.sections import StopSpec
from rl_platform.utils.console_log import OFF_CONSOLE, console_log_is_ours
from rl_platform.utils.console_text import duration_text
from rl_platform.utils.consoles import stderr_console


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


def _format_return(value: float) -> str:
    """The iteration's return mean; a dash where no episode ended in it (long episodes, the
    first iterations after a resume restarts every game)."""
    return f"{value:.1f}" if math.isfinite(value) else "-"


def budget_fraction(
    *, stop: StopSpec, iteration: int, env_steps: int, elapsed_s: float
) -> float | None:
    """How far the run is to its nearest budget stop (0..1); None if it has none."""
    parts = []
    if stop.env_steps:
        parts.append(env_steps / stop.env_steps)
    if stop.iterations:
        parts.append(iteration / stop.iterations)
    if stop.minutes:
        parts.append(elapsed_s / (stop.minutes * 60))
    return min(1.0, max(parts)) if parts else None


class ProgressLine:
    """Where `rlp` owns a terminal's console (`utils/console_log.py`): a live display, the
    iteration's line over a bar to the nearest stop, and the line in train.log only.
    Elsewhere (CI, a job's log, a pipe, the Python API): one log line per iteration."""

    def __init__(self, name: str, stop: StopSpec) -> None:
        self.name, self.stop = name, stop
        self.started = time.monotonic()
        self._live: Live | None = None
        if console_log_is_ours() and sys.stderr.isatty():
            first = _display(Text(f"{name} | starting", style="dim"), None)
            self._live = Live(first, console=stderr_console, refresh_per_second=2)
            self._live.start()

    def update(self, metrics: dict[str, float]) -> None:
        iteration, steps = int(metrics["iteration"]), int(metrics["env_steps"])
        rate = metrics.get("perf/env_steps_per_s", 0.0)
        elapsed_s = time.monotonic() - self.started
        eta = estimate_eta_s(
            stop=self.stop,
            iteration=iteration,
            env_steps=steps,
            steps_per_s=rate,
            s_per_iter=metrics.get("perf/iteration_s", 0.0),
            elapsed_s=elapsed_s,
        )
        ret = _format_return(metrics.get("train/episode_return_mean", float("nan")))
        line = (
            f"{self.name} | iter {iteration} | env steps {steps:,} | return {ret} | "
            f"{rate:,.0f} steps/s | ETA {duration_text(eta)}"
        )
        split = split_summary(metrics)
        if split:
            line += f" | {split}"
        if self._live is None:
            logger.info(line)
            return
        logger.bind(**{OFF_CONSOLE: True}).info(line)  # the display shows it
        done = budget_fraction(
            stop=self.stop, iteration=iteration, env_steps=steps, elapsed_s=elapsed_s
        )
        self._live.update(_display(Text(line), done))

    def close(self) -> None:
        if self._live is not None:
            self._live.stop()


def _display(line: Text, done: float | None) -> Group:
    """The line over a bar (a pulsing one without a budget stop) and its percentage."""
    bar = Table.grid(padding=(0, 1))
    shown = "" if done is None else f"{done:.0%}"
    bar.add_row(
        ProgressBar(total=None if done is None else 1.0, completed=done or 0.0, width=40), shown
    )
    return Group(line, bar)
