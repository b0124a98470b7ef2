"""What `rlp search` prints after its trials: the table, then the summary lines, each starting
at column 0 and never split by rich (no Ray)."""

import io
from pathlib import Path
from types import SimpleNamespace

from rich.console import Console

from rl_platform.commands import search as search_command_module
from rl_platform.commands.search import _summary
from rl_platform.commands.trial_table import LiveTable, TrialTable, trial_table
from rl_platform.search.results import TrialRow
from rl_platform.utils import consoles

METRIC = "train/episode_return_mean"
PARAMS = {
    "training.lr": 0.0005636955798449844,
    "training.num_epochs": 6,
    "training.minibatch_size": 125,
    "training.gamma": 0.9520077026728735,
}


def _row(status: str, metric: float | None) -> TrialRow:
    return TrialRow(trial_id="5958e_00000", status=status, params=PARAMS, metric=metric)


def _console(*, terminal: bool, width: int = 120) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=width), buffer


def test_off_a_terminal_the_table_prints_once_and_the_next_line_starts_at_column_0():
    console, buffer = _console(terminal=False)
    table = trial_table(console=console, param_paths=list(PARAMS), metric=METRIC)
    assert not isinstance(table, LiveTable)
    with table:
        table.update([_row("running", 12.0)])
        table.update([_row("completed", 25.84)])
    console.print("search folder: /tmp/s", markup=False, highlight=False, soft_wrap=True)
    text = buffer.getvalue()
    assert text.count("search: 1 trials") == 1 and "running" not in text
    assert "completed" in text and "25.84" in text
    assert text.splitlines()[-1] == "search folder: /tmp/s"


def test_without_rows_nothing_prints_off_a_terminal():
    console, buffer = _console(terminal=False)
    with trial_table(console=console, param_paths=list(PARAMS), metric=METRIC):
        pass
    assert buffer.getvalue() == ""


def test_on_a_terminal_the_table_is_live():
    console, _ = _console(terminal=True)
    table = trial_table(console=console, param_paths=list(PARAMS), metric=METRIC)
    assert isinstance(table, LiveTable) and isinstance(table, TrialTable)


def test_the_headline_shows_values_as_set_takes_them():
    assert _row("completed", 25.84).headline() == (
        "trial 5958e_00000 (25.84) training.lr=0.0005637, training.num_epochs=6, "
        "training.minibatch_size=125, training.gamma=0.952"
    )
    assert TrialRow(trial_id="a", status="pending").headline() == "trial a (-)"


def test_the_best_line_stays_one_line_at_80_columns(monkeypatch, tmp_path: Path):
    console, buffer = _console(terminal=False, width=80)
    monkeypatch.setattr(consoles, "stderr_console", console)
    monkeypatch.setattr(search_command_module, "stderr_console", console)
    best = _row("completed", 25.84)
    outcome = SimpleNamespace(
        search_dir=tmp_path, rows=[best], interrupted=False, best=best, best_yaml=tmp_path / "b"
    )
    _summary(outcome)
    lines = buffer.getvalue().splitlines()
    best_lines = [line for line in lines if line.startswith("best: ")]
    assert best_lines == [f"best: {best.headline()}"]
    assert len(best_lines[0]) > 80
    assert all(not line.startswith(" ") for line in lines)
    assert lines[-1] == f"train it: rlp train {tmp_path / 'b'}"
