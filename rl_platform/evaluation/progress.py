"""Progress on stderr for long commands (stdout stays clean for `--json`): games over, their
rate and an ETA, as a rich bar on a terminal and as log lines elsewhere (CI, a job's log, a
pipe), where `rlp eval -n 1000000000` once said nothing for minutes."""

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from loguru import logger
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from rl_platform.utils.console_text import duration_text, rate_text
from rl_platform.utils.consoles import stderr_console

FIRST_LINE_S = 2.0
"""Off a terminal, the first progress line comes this long after the games started (a rate
measured over a shorter time says little)."""
LINE_EVERY_S = 10.0
"""Off a terminal, then a line at most this often: a job's log, not a flood."""


class GameProgress:
    """Games over, games/s and ETA of a long `rlp eval`/`rlp run`, on stderr: a rich bar on
    a terminal, else a log line (`FIRST_LINE_S`, then every `LINE_EVERY_S`). Call it once
    per folded episode; `reached(n)` counts the games over while the arena plays a batch."""

    def __init__(self, total: int, description: str, progress: Progress | None) -> None:
        self.total, self.description = total, description
        self._progress = progress
        self._task = progress.add_task(description, total=total) if progress else None
        self.started: float | None = None  # when the first game was seen playing
        self._folded = self._over = 0
        self._next_line = math.inf

    def __call__(self, *_: Any) -> None:
        self._folded += 1
        self.reached(self._folded)

    def reached(self, games_over: int) -> None:
        if self.started is None:  # games are playing: the rate counts from here
            self.started = time.monotonic()
            self._next_line = self.started + FIRST_LINE_S
            if self._progress is None:
                logger.info(f"{self.description}: {self.total:,} games")
        if games_over <= self._over:
            return
        self._over = games_over
        if self._progress is not None:
            self._progress.update(self._task, completed=games_over)
            return
        now = time.monotonic()
        if now >= self._next_line:
            self._next_line = now + LINE_EVERY_S
            logger.info(self.line(now))

    def finished(self) -> None:
        """Off a terminal, the games' count and rate once all are over (a job's log ends
        with them); a terminal's bar simply goes."""
        if self._progress is None and self.started is not None:
            elapsed = time.monotonic() - self.started
            rate = self._over / max(elapsed, 1e-9)
            over = f"{self._over:,} games in {elapsed:.1f} s"
            logger.info(f"{self.description}: {over} | {rate_text(rate)} games/s")

    def line(self, now: float) -> str:
        rate = self._over / max(now - (self.started or now), 1e-9)
        eta = (self.total - self._over) / rate if rate > 0 else None
        over = f"{self._over:,}/{self.total:,} games"
        return f"{self.description}: {over} | {rate_text(rate)} games/s | ETA {duration_text(eta)}"


class _GamesPerSecond(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{rate_text(task.speed or 0.0)} games/s")


@contextmanager
def episode_progress(total: int, description: str) -> Iterator[GameProgress]:
    """A `GameProgress` for `total` games (module docstring)."""
    if not stderr_console.is_terminal:
        progress = GameProgress(total, description, None)
        yield progress
        progress.finished()  # not after an error: its line says what happened
        return
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("games"),
        _GamesPerSecond(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=stderr_console,
        transient=True,
    )
    with progress:
        yield GameProgress(total, description, progress)


@contextmanager
def status(message: str) -> Iterator[None]:
    """A spinner while a slow step runs (importing Ray and rebuilding modules takes seconds)."""
    if not stderr_console.is_terminal:
        yield
        return
    with stderr_console.status(message):
        yield
