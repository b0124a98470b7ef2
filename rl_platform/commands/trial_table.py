"""The live trial table of `rlp search` (rich; CLI edge): trial, status, sampled values, metric."""

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from rl_platform.search.results import TrialRow

_STYLE = {"completed": "green", "early_stopped": "yellow", "running": "cyan"}
_STYLE |= {"collapsed": "red", "nan": "red", "error": "bold red"}


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "-" if value is None else escape(str(value))


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


class LiveTable:
    """A context manager redrawing the table whenever `update(rows)` is called.

    The live display starts with the first rows: the lines logged before them (the search
    folder, the TensorBoard command, the dashboard URL) print above it instead of being torn
    by its redraws."""

    def __init__(self, *, console: Console, param_paths: list[str], metric: str) -> None:
        self.param_paths, self.metric = param_paths, metric
        self.rows: list[TrialRow] = []
        self._live = Live(self._render(), console=console, refresh_per_second=2)

    def _render(self) -> Table:
        return render_table(self.rows, param_paths=self.param_paths, metric=self.metric)

    def update(self, rows: list[TrialRow]) -> None:
        self.rows = rows
        self._live.update(self._render())
        if not self._live.is_started:
            self._live.start()

    def __enter__(self) -> "LiveTable":
        return self

    def __exit__(self, *exc: object) -> None:
        self._live.stop()
