"""`rlp plot`: learning curves from run folders' metrics.jsonl (matplotlib, Agg backend).

Runs are grouped by the `name` in their spec.yaml (seeds of one spec share a name), so the
folder of `rlp train --seeds` plots as one group. A group of several runs is drawn as the mean
over runs on a common env-step grid (each run linearly interpolated, only where all runs have
data) with a band, min-max (default), mean +- std or the 95% bootstrap interval of the mean
(`rl_platform.utils.stats`) at each grid point, and each run as a faint line.
`--league` draws `league/rating/<id>` (the learners' conservative ratings) over env steps.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.evaluation.reference_points import draw_reference, reference_points
from rl_platform.storage.layout import METRICS_FILE
from rl_platform.storage.metrics_rows import has_metrics, read_metrics
from rl_platform.storage.saved_spec import read_saved_spec_tree
from rl_platform.utils.stats import bootstrap_interval

X_KEY = "env_steps"
RATING_PREFIX = "league/rating/"
GRID_POINTS = 200
FIGSIZE, DPI = (8.0, 5.0), 100
Band = Literal["minmax", "std", "ci"]
BAND_NAMES: dict[str, str] = {"minmax": "min-max", "std": "mean ± std", "ci": "95% bootstrap CI"}


@dataclass(frozen=True)
class Curve:
    run_dir: Path
    x: np.ndarray
    y: np.ndarray


def find_runs(paths: Sequence[Path]) -> list[Path]:
    """Run folders among `paths`; a folder without metrics.jsonl is searched 2 levels down."""
    runs: list[Path] = []
    for path in paths:
        if not path.exists():
            raise UserError(f"{path}: does not exist")
        if has_metrics(path):
            runs.append(path)
            continue
        found = sorted(
            {p.parent for pattern in (f"*/{METRICS_FILE}", f"*/*/{METRICS_FILE}")
             for p in path.glob(pattern)}
        )  # fmt: skip
        if not found:
            raise UserError(f"{path}: no {METRICS_FILE} here or in its run folders")
        runs.extend(found)
    return list(dict.fromkeys(runs))


def spec_name(run_dir: Path) -> str:
    data = read_saved_spec_tree(run_dir)
    name = data.get("name") if isinstance(data, dict) else None
    return str(name) if name else run_dir.parent.name


def curve(run_dir: Path, rows: list[dict[str, float]], metric: str) -> Curve | None:
    points = [
        (float(row[X_KEY]), float(row[metric]))
        for row in rows
        if isinstance(row.get(metric), int | float) and isinstance(row.get(X_KEY), int | float)
        and math.isfinite(float(row[metric]))
    ]  # fmt: skip
    if not points:
        return None
    x, y = np.asarray(points).T
    order = np.argsort(x, kind="stable")
    return Curve(run_dir, x[order], y[order])


def aggregate(curves: Sequence[Curve], band: Band) -> tuple[np.ndarray, ...]:
    """(x, mean, low, high) over runs on the env-step range every run covers."""
    if len(curves) == 1:
        c = curves[0]
        return c.x, c.y, c.y, c.y
    start, stop = max(c.x[0] for c in curves), min(c.x[-1] for c in curves)
    if stop <= start:
        # No overlap (e.g. a run that only just started): fall back to the union of points.
        start, stop = min(c.x[0] for c in curves), max(c.x[-1] for c in curves)
    grid = np.linspace(start, stop, GRID_POINTS)
    values = np.stack([np.interp(grid, c.x, c.y) for c in curves])
    mean = values.mean(axis=0)
    if band == "std":
        std = values.std(axis=0)
        return grid, mean, mean - std, mean + std
    if band == "ci":
        return grid, mean, *bootstrap_interval(values, axis=0)
    return grid, mean, values.min(axis=0), values.max(axis=0)


def _figure():
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    return plt, *plt.subplots(figsize=FIGSIZE, dpi=DPI)


def plot_runs(
    run_paths: Sequence[Path],
    *,
    metric: str,
    out: Path,
    band: Band = "minmax",
    reference: tuple[Path, str] | None = None,
) -> dict[str, object]:
    """Draw one mean curve + band per spec name, and `reference`'s published points (FILE,
    KEY: `rl_platform.evaluation.reference_points`); returns what was drawn."""
    points = reference_points(*reference) if reference is not None else []
    groups: dict[str, list[Curve]] = {}
    skipped = []
    for run_dir in find_runs(run_paths):
        found = curve(run_dir, read_metrics(run_dir), metric)
        if found is None:
            skipped.append(str(run_dir))
            continue
        groups.setdefault(spec_name(run_dir), []).append(found)
    if not groups:
        raise UserError(f"no run has values of {metric!r} (runs without it: {skipped})")
    plt, fig, ax = _figure()
    try:
        for name, curves in sorted(groups.items()):
            x, mean, low, high = aggregate(curves, band)
            label = f"{name} ({len(curves)} run{'s' if len(curves) > 1 else ''})"
            (line,) = ax.plot(x, mean, label=label, linewidth=1.8)
            if len(curves) > 1:
                color = line.get_color()
                ax.fill_between(x, low, high, color=color, alpha=0.2, linewidth=0)
                for c in curves:  # each seed faintly, so a single odd run stays visible
                    ax.plot(c.x, c.y, color=color, alpha=0.35, linewidth=0.8)
        if reference is not None:
            draw_reference(ax, points, label=reference[1])
        _finish(ax, title=f"{metric} (band: {BAND_NAMES[band]} across runs)", ylabel=metric)
        _save(fig, out)
    finally:
        plt.close(fig)
    return {"out": str(out), "metric": metric, "groups": {k: len(v) for k, v in groups.items()},
            "skipped": skipped, "reference_points": len(points)}  # fmt: skip


def plot_league(run_dir: Path, *, out: Path) -> dict[str, object]:
    """League learners' ratings (`league/rating/<id>`) over env steps."""
    if not has_metrics(run_dir):
        raise UserError(f"--league {run_dir}: no {METRICS_FILE}; pass a league run folder")
    rows = read_metrics(run_dir)
    keys = sorted({k for row in rows for k in row if k.startswith(RATING_PREFIX)})
    if not keys:
        raise UserError(f"{run_dir}: no {RATING_PREFIX}* metrics; was it trained with a league?")
    plt, fig, ax = _figure()
    drawn = {}
    try:
        for key in keys:
            found = curve(run_dir, rows, key)
            if found is not None:
                member = key.removeprefix(RATING_PREFIX)
                ax.plot(found.x, found.y, label=member, linewidth=1.8, marker=".")
                drawn[member] = len(found.x)
        _finish(ax, title=f"league ratings ({spec_name(run_dir)})", ylabel="rating (mu - 3 sigma)")
        _save(fig, out)
    finally:
        plt.close(fig)
    return {"out": str(out), "members": drawn}


def _finish(ax, *, title: str, ylabel: str) -> None:
    ax.set_xlabel("env steps")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best")


def _save(fig, out: Path) -> None:
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UserError(f"--out {out}: use a .png, .svg or .pdf file name")
    if not out.parent.is_dir():
        raise UserError(f"--out {out}: folder {out.parent} does not exist")
    fig.tight_layout()
    fig.savefig(out)
