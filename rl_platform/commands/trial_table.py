"""The trial table of `rlp search` (rich; CLI edge): trial, status, sampled values, metric;
redrawn live on a terminal, printed once at the end elsewhere."""

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from rl_platform.search.results import TrialRow
from rl_platform.utils.console_text import shown

_STYLE = {"completed": "green", "early_stopped": "yellow", "running": "cyan"}
_STYLE |= {"collapsed": "red", "nan": "red", "error": "bold red"}


def _fmt(value: Any) -> str:
    return escape(shown(value))


def short_names(paths: list[str]) -> dict[str, str]:
    """`training.lr` -> `lr` for narrow terminals, unless two paths end in the same name."""
    last = [path.rsplit(".", 1)[-1] for path in paths]
    return {p: n if last.count(n) == 1 else p for p, n in zip(paths, last, strict=True)}


def render_table(rows: Sequence[TrialRow], *, param_paths: list[str], metric: str) -> Table:
    # Compact: in an 80-column terminal long headers fold, values stay whole.
    table = Table(
        title=f"search: {len(rows)} trials",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("trial", no_wrap=True)
    table.add_column("status", no_wrap=True)
    cells = [
        [_fmt(row.params.get(path)) for path in param_paths] + [_fmt(row.metric)] for row in rows
    ]
    headers = [*short_names(param_paths).values(), metric.rsplit("/", 1)[-1]]
    for index, header in enumerate(headers):
        width = max([4, *(len(line[index]) for line in cells)])
        table.add_column(header, justify="right", overflow="fold", min_width=width)
    table.add_column("env_steps", justify="right", no_wrap=True)
    table.add_column("iters", justify="right")
    for row, line in zip(rows, cells, strict=True):
        style = _STYLE.get(row.status, "dim")
        table.add_row(
            row.trial_id.rsplit("_", 1)[-1],  # Tune's ids share a prefix; results.csv has all
            f"[{style}]{row.status}[/]",
            *line,
            str(row.env_steps),
            str(row.iterations),
        )
    return table


class TrialTable:
    """Off a terminal (a pipe, a job's log): the table printed once, as it stands when the
    search ends. rich's `Live` prints only its last frame there too, but leaves the line of its
    last row open (rich 15), so the next line would start after that row's padding."""

    def __init__(self, *, console: Console, param_paths: list[str], metric: str) -> None:
        self.console, self.param_paths, self.metric = console, param_paths, metric
        self.rows: list[TrialRow] = []

    def _render(self) -> Table:
        return render_table(self.rows, param_paths=self.param_paths, metric=self.metric)

    def update(self, rows: list[TrialRow]) -> None:
        self.rows = rows

    def __enter__(self) -> "TrialTable":
        return self

    def __exit__(self, *exc: object) -> None:
        if self.rows:
            self.console.print(self._render())


class LiveTable(TrialTable):
    """On a terminal: the table redrawn in place whenever `update(rows)` is called.

    The live display starts with the first rows: the lines logged before them (the search
    folder, the TensorBoard command, the dashboard URL) print above it instead of being torn
    by its redraws."""

    def __init__(self, *, console: Console, param_paths: list[str], metric: str) -> None:
        super().__init__(console=console, param_paths=param_paths, metric=metric)
        self._live = Live(self._render(), console=console, refresh_per_second=2)

    def update(self, rows: list[TrialRow]) -> None:
        super().update(rows)
        self._live.update(self._render())
        if not self._live.is_started:
            self._live.start()

    def __exit__(self, *exc: object) -> None:
        self._live.stop()


def trial_table(*, console: Console, param_paths: list[str], metric: str) -> TrialTable:
    """The live table on a terminal, else the table printed once when the search ends."""
    kind = LiveTable if console.is_terminal else TrialTable
    return kind(console=console, param_paths=param_paths, metric=metric)
