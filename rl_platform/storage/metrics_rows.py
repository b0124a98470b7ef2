"""`metrics.jsonl`, one row of metrics per iteration of a run: its one writer and reader.

Written by `run/sinks.py` `MetricSinks` through `MetricsLog`, cut back to a checkpoint on
resume, read by `rlp plot`, tests and benchmarks (`tests/unit/test_saved_formats.py`).
"""

import json
from pathlib import Path
from typing import Any

from rl_platform.storage.jsonl_rows import read_rows, restore_row, truncate_after
from rl_platform.storage.layout import METRICS_FILE
from rl_platform.utils.atomic import writes_named


def metrics_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / METRICS_FILE


def has_metrics(folder: str | Path) -> bool:
    return metrics_path(folder).is_file()


def runs_under(folder: str | Path) -> list[Path]:
    """Every folder under `folder`, at any depth, that holds a metrics.jsonl."""
    return sorted({p.parent for p in Path(folder).rglob(METRICS_FILE)})


class MetricsLog:
    """The run's metrics.jsonl, open for appending one row per iteration."""

    def __init__(self, run_dir: Path) -> None:
        self.path = metrics_path(run_dir)
        self._file = self.path.open("a", encoding="utf-8")

    def append(self, row: dict[str, float]) -> None:
        with writes_named(self.path):  # a full disk names metrics.jsonl
            self._file.write(json.dumps(row, allow_nan=True) + "\n")
            self._file.flush()

    def close(self) -> None:
        self._file.close()


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every row, oldest first; a line that is not JSON is a `UserError` naming it."""
    return read_rows(metrics_path(run_dir))


def truncate_metrics_after(run_dir: Path, iteration: int) -> None:
    truncate_after(metrics_path(run_dir), iteration)


def restore_metrics_row(run_dir: Path, row: dict[str, Any] | None) -> bool:
    return restore_row(metrics_path(run_dir), row)
