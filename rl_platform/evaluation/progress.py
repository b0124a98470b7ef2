"""Rich progress on stderr for long commands (stdout stays clean for `--json`)."""

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

stderr_console = Console(stderr=True)


@contextmanager
def episode_progress(total: int, description: str) -> Iterator[Callable[[Any], None]]:
    """Yields a callback to call once per finished episode (any argument is ignored)."""
    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=stderr_console,
        transient=True,
        disable=not stderr_console.is_terminal,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda *_: progress.advance(task)


@contextmanager
def status(message: str) -> Iterator[None]:
    """A spinner while a slow step runs (importing Ray and rebuilding modules takes seconds)."""
    if not stderr_console.is_terminal:
        yield
        return
    with stderr_console.status(message):
        yield
