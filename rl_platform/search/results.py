"""Search outcomes as plain rows: each trial's status, sampled values and final numbers, written
to results.csv, and the best trial written as best.yaml (a spec `rlp train` runs as is).

Pure Python: `tuner.py` turns Tune's trials into `TrialRow`s; everything here is testable alone.
"""

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rl_platform.search.budget import TrialBudget
from rl_platform.search.space import apply_sample, sampled_values, trial_spec_data
from rl_platform.utils.atomic import write_text_atomic
from rl_platform.utils.console_text import shown
from rl_platform.utils.safe_yaml import dump_yaml

# Reported by the trainable on every result.
TRIAL_STATUS, STOP_REASON = "trial_status", "stop_reason"
UNHEALTHY = ("collapsed", "nan")
FINISHED = ("completed", "early_stopped", "collapsed", "nan", "error")


@dataclass(frozen=True)
class TrialRow:
    """One trial as shown in the live table and written to results.csv."""

    trial_id: str
    status: str
    """completed | early_stopped | collapsed | nan | error | pending | running | paused."""
    params: dict[str, Any] = field(default_factory=dict)
    metric: float | None = None
    """Last reported value of the search metric."""
    env_steps: int = 0
    iterations: int = 0
    stop_reason: str = ""

    def headline(self) -> str:
        """`trial 5958e_00000 (25.84) training.lr=0.0005637, training.gamma=0.952`: the values
        in the form `--set` takes them, floats to 4 significant digits."""
        values = ", ".join(f"{path}={shown(value)}" for path, value in self.params.items())
        return f"trial {self.trial_id} ({shown(self.metric)}) {values}".rstrip()


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def trial_status(*, tune_status: str, result: Mapping[str, Any], budget: TrialBudget) -> str:
    """Our status from Tune's (PENDING/RUNNING/PAUSED/TERMINATED/ERROR) and the last result."""
    if tune_status == "ERROR":
        return "error"
    if result.get(TRIAL_STATUS) in UNHEALTHY:
        return str(result[TRIAL_STATUS])
    if tune_status != "TERMINATED":
        return tune_status.lower()
    reached = _number(result.get(budget.time_attr)) or 0.0
    # The spec's own stop (e.g. stop.return_mean) also counts as a full run.
    return "completed" if result.get(STOP_REASON) or reached >= budget.max_t else "early_stopped"


def trial_row(
    *,
    trial_id: str,
    tune_status: str,
    config: Mapping[str, Any],
    result: Mapping[str, Any],
    param_paths: list[str],
    metric: str,
    budget: TrialBudget,
) -> TrialRow:
    return TrialRow(
        trial_id=trial_id,
        status=trial_status(tune_status=tune_status, result=result, budget=budget),
        params=sampled_values(config, param_paths),
        metric=_number(result.get(metric)),
        env_steps=int(_number(result.get("env_steps")) or 0),
        iterations=int(_number(result.get("iteration", result.get("training_iteration"))) or 0),
        stop_reason=str(result.get(STOP_REASON) or ""),
    )


def results_csv(rows: Sequence[TrialRow], *, param_paths: list[str], metric: str) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["trial_id", "status", *param_paths, metric, "env_steps", "iterations"])
    for row in rows:
        values = [row.params.get(path, "") for path in param_paths]
        metric_text = "" if row.metric is None else f"{row.metric:.6g}"
        writer.writerow(
            [row.trial_id, row.status, *values, metric_text, row.env_steps, row.iterations]
        )
    return buffer.getvalue()


def read_results_csv(path: str | Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def pick_best(rows: Sequence[TrialRow], *, mode: str) -> TrialRow | None:
    """The best healthy trial; trials that ran their full budget win over early-stopped ones
    (an early-stopped trial's return was measured on a smaller budget)."""
    for statuses in (("completed",), ("completed", "early_stopped")):
        candidates = [r for r in rows if r.status in statuses and r.metric is not None]
        if candidates:
            sign = 1.0 if mode == "max" else -1.0
            return max(candidates, key=lambda r: sign * r.metric)  # type: ignore[operator]
    return None


def best_spec_yaml(base: Mapping[str, Any], best: TrialRow) -> str:
    """The complete spec of `best`, validated, without a `search:` block."""
    spec = apply_sample(base, best.params, source="best trial")
    header = f"# best trial {best.trial_id}: " + ", ".join(
        f"{k}={v!r}" for k, v in best.params.items()
    )
    return header + "\n" + dump_yaml(trial_spec_data(spec))


def write_outputs(
    search_dir: Path,
    *,
    base: Mapping[str, Any],
    rows: Sequence[TrialRow],
    param_paths: list[str],
    metric: str,
    mode: str,
) -> TrialRow | None:
    """results.csv always; best.yaml once every trial has finished. Returns the best row."""
    write_text_atomic(
        search_dir / "results.csv", results_csv(rows, param_paths=param_paths, metric=metric)
    )
    if not rows or any(row.status not in FINISHED for row in rows):
        return None
    best = pick_best(rows, mode=mode)
    if best is not None:
        write_text_atomic(search_dir / "best.yaml", best_spec_yaml(base, best))
    return best
