"""A learning row's numbers from its seeds' run folders (pure: no Ray, no training).

Each seed's curve is `train/episode_return_mean` (the mean return of the last 100 episodes)
against env steps, read by `rlp plot`'s reader (`rl_platform.evaluation.plot`). A seed's
return at a fixed step count is its curve linearly interpolated there, and counts only if the
seed reached that count. Over the seeds: IQM and the 95% percentile-bootstrap interval of the
mean (`rl_platform.utils.stats.seed_stats`, the estimators of `rlp train --seeds`).
"""

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import stats

from rl_platform.base.metric_keys import RETURN_MEAN
from rl_platform.evaluation.plot import Curve, curve, find_runs
from rl_platform.storage.metrics_rows import read_metrics, runs_under
from rl_platform.utils.stats import IQM_TRIM, seed_stats

GRID_POINTS = 200


@dataclass(frozen=True)
class SeedRun:
    """One seed's curve and throughput (its run folder's `trial_metrics.json`)."""

    name: str
    curve: Curve
    env_steps_per_s: float | None
    wall_s: float | None
    path: Path


def read_seed_runs(folder: Path) -> list[SeedRun]:
    """Every seed run under `folder` (`rlp train --seeds --out FOLDER` writes them 4 levels
    down: seeds/NAME/STAMP/seed_N), in name order."""
    runs = []
    for run_dir in find_runs(runs_under(folder) or [folder]):
        found = curve(run_dir, read_metrics(run_dir), RETURN_MEAN)
        if found is None:
            continue
        trial = run_dir / "trial_metrics.json"
        summary = json.loads(trial.read_text()) if trial.is_file() else {}
        runs.append(
            SeedRun(
                name=run_dir.name,
                curve=found,
                env_steps_per_s=summary.get("env_steps_per_s"),
                wall_s=summary.get("wall_s"),
                path=run_dir,
            )
        )
    return runs


def value_at(found: Curve, steps: float) -> float | None:
    """The curve at `steps` (linear between logged points); None if the run stopped before."""
    if found.x[-1] < steps or found.x[0] > steps:
        return None
    return float(np.interp(steps, found.x, found.y))


def row_at(runs: Sequence[SeedRun], steps: float) -> dict[str, object]:
    """IQM, mean and 95% interval over the seeds that reached `steps`."""
    values = [v for run in runs if (v := value_at(run.curve, steps)) is not None]
    if not values:
        return {"env_steps": steps, "n": 0}
    return {"env_steps": steps, **seed_stats(values).as_dict()}


def iqm_curve(runs: Sequence[SeedRun]) -> tuple[np.ndarray, np.ndarray]:
    """(env steps, IQM over seeds) on the env-step range every seed covers."""
    curves = [run.curve for run in runs]
    start, stop = max(c.x[0] for c in curves), min(c.x[-1] for c in curves)
    if stop <= start:
        return np.empty(0), np.empty(0)
    grid = np.linspace(start, stop, GRID_POINTS)
    values = np.stack([np.interp(grid, c.x, c.y) for c in curves])
    return grid, stats.trim_mean(values, IQM_TRIM, axis=0)


def throughput(runs: Sequence[SeedRun]) -> dict[str, float | None]:
    """Median env steps/s and wall time over seeds (None where no seed reported it)."""

    def median(values: list[float | None]) -> float | None:
        finite = [v for v in values if isinstance(v, int | float) and math.isfinite(v)]
        return float(np.median(finite)) if finite else None

    return {
        "env_steps_per_s": median([run.env_steps_per_s for run in runs]),
        "wall_s_per_seed": median([run.wall_s for run in runs]),
    }
