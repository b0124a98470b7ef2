"""The aggregate of a multi-seed experiment: each seed's final value of each metric, and the
mean, IQM and 95% bootstrap interval over seeds (`rl_platform.utils.stats`), as written to the
experiment's `trial_metrics.json` and shown in its `trial_metrics` line.

The metrics: `train/episode_return_mean` and every `eval/...` metric (evaluation during
training). A seed's final value is the last finite one in its metrics: evaluation metrics are
only on the rows of an evaluation, and a return stays NaN until the first episode ends.
"""

import math
from collections.abc import Iterable, Mapping
from typing import Any

from rl_platform.base.metric_keys import EVAL_PREFIX, RETURN_MEAN
from rl_platform.multi_seed.folder import seed_run_dir
from rl_platform.utils.console_text import shown
from rl_platform.utils.stats import CONFIDENCE, seed_stats


def is_aggregated(key: str) -> bool:
    return key == RETURN_MEAN or key.startswith(EVAL_PREFIX)


def final_values(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The last finite value of each aggregated metric over a run's metric rows."""
    finals: dict[str, float] = {}
    for row in rows:
        for key, value in row.items():
            if is_aggregated(key) and isinstance(value, int | float) and math.isfinite(value):
                finals[key] = float(value)
    return finals


def seeds_summary(
    finals: Mapping[int, Mapping[str, float]], *, failed: Mapping[int, str]
) -> dict[str, Any]:
    """`trial_metrics.json` of the experiment: per metric over the seeds that finished (a metric
    some seeds never logged is over the others, `n` says how many), and why others failed."""
    keys = sorted({key for values in finals.values() for key in values})
    keys.sort(key=lambda key: key != RETURN_MEAN)  # the return first, the rest by name
    metrics = {
        key: seed_stats(
            [values[key] for _, values in sorted(finals.items()) if key in values]
        ).as_dict()
        for key in keys
    }
    seeds = sorted([*finals, *failed])
    return {
        "seeds": seeds,
        "runs": {str(seed): seed_run_dir("", seed).name for seed in seeds},
        "failed": {str(seed): reason for seed, reason in sorted(failed.items())},
        "confidence": CONFIDENCE,
        "metrics": metrics,
    }


def summary_line(summary: Mapping[str, Any]) -> str:
    """`train/episode_return_mean mean:.. iqm:.. ci95:[.., ..] n:3 | eval/... | failed:...`."""
    parts = []
    for key, entry in summary["metrics"].items():
        interval = entry["ci95"]
        ci95 = f"[{shown(interval[0])}, {shown(interval[1])}]" if interval else "n/a"
        parts.append(
            f"{key} mean:{shown(entry['mean'])} iqm:{shown(entry['iqm'])} "
            f"ci95:{ci95} n:{entry['n']}"
        )
    if summary["failed"]:
        parts.append(f"failed seeds: {', '.join(summary['failed'])}")
    return " | ".join(parts) or "no metric to aggregate"
