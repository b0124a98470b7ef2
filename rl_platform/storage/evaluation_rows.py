"""`evaluation.jsonl`, one row per evaluation during training (`evaluation:` specs): its one
writer and reader (`tests/unit/test_saved_formats.py`)."""

import json
from pathlib import Path
from typing import Any

from rl_platform.storage.jsonl_rows import read_rows, restore_row, truncate_after
from rl_platform.storage.layout import EVALUATION_FILE
from rl_platform.utils.atomic import writes_named


def evaluation_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / EVALUATION_FILE


def append_evaluation_row(run_dir: Path, row: dict[str, Any]) -> None:
    path = evaluation_path(run_dir)
    with writes_named(path), path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")


def read_evaluation_rows(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every row, oldest first; a line that is not JSON is a `UserError` naming it."""
    return read_rows(evaluation_path(run_dir))


def truncate_evaluations_after(run_dir: Path, iteration: int) -> None:
    truncate_after(evaluation_path(run_dir), iteration)


def restore_evaluation_row(run_dir: Path, row: dict[str, Any] | None) -> bool:
    return restore_row(evaluation_path(run_dir), row)
