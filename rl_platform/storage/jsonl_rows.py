"""A JSON-lines file of one row per iteration, as the run's row files are kept: appended as
training goes, cut back to a checkpoint on resume. The files themselves are owned by
`metrics_rows.py` (metrics.jsonl) and `evaluation_rows.py` (evaluation.jsonl)."""

import json
from pathlib import Path
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.utils.atomic import write_text_atomic


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every row, blank lines skipped; a line that is not JSON is a `UserError` naming it."""
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            # The last line of a run still being written can be partial.
            raise UserError(f"{path}:{number}: not valid JSON") from None
    return rows


def truncate_after(path: Path, iteration: int) -> None:
    """On resume, drop lines written after the restored checkpoint so the log stays consistent;
    atomically, so a crash mid-rewrite leaves the old file whole. A file with nothing to drop
    is not rewritten."""
    if not path.is_file():
        return
    text = path.read_text(encoding="utf-8")
    kept = []
    for line in text.splitlines():
        try:
            if int(json.loads(line).get("iteration", 0)) <= iteration:
                kept.append(line)
        except (ValueError, AttributeError):
            continue
    cut = "".join(f"{line}\n" for line in kept)
    if cut != text:
        write_text_atomic(path, cut)


def restore_row(path: Path, row: dict[str, Any] | None) -> bool:
    """After `truncate_after`, append `row` (a checkpoint's copy of its own row) when the file
    lacks it: killed between the checkpoint and its row, or the row torn. True if appended."""
    if row is None:
        return False
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    last = int(json.loads(lines[-1]).get("iteration", 0)) if lines else 0
    if last >= int(row["iteration"]):
        return False
    write_text_atomic(path, "".join(f"{line}\n" for line in lines) + json.dumps(row) + "\n")
    return True
