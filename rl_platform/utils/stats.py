"""Across-seed statistics: the mean, the interquartile mean (IQM) and a 95% percentile-bootstrap
interval, the estimators Agarwal et al. (2021) recommend for few runs ("Deep Reinforcement
Learning at the Edge of the Statistical Precipice", https://arxiv.org/abs/2108.13264).

Computed with scipy.stats, not the paper's `rliable` library: rliable 1.2 requires arch<8, and
arch 7.x fails to import with pandas 3 (the pandas Ray resolves to here), so using it would pin
pandas<3 for the whole project. The estimators are rliable's own: IQM is
`scipy.stats.trim_mean(x, 0.25)` (rliable's `aggregate_iqm`), the interval a percentile
bootstrap over runs (rliable's `get_interval_estimates` default; with one task its stratified
bootstrap is the plain one). `trim_mean` trims whole runs, so below 4 seeds the IQM equals the
mean.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
RESAMPLES = 10_000
IQM_TRIM = 0.25
"""Trimmed from each end: the mean of the middle 50% of runs."""
RNG_SEED = 0
"""Fixed, so the same runs always give the same interval."""


@dataclass(frozen=True)
class SeedStats:
    """One metric's final values over seeds and their summary."""

    values: tuple[float, ...]
    mean: float
    iqm: float
    ci95: tuple[float, float] | None
    """Bootstrap interval of the mean; None below 2 values (nothing to resample)."""

    @property
    def n(self) -> int:
        return len(self.values)

    def as_dict(self) -> dict[str, object]:
        interval = list(self.ci95) if self.ci95 is not None else None
        return {"n": self.n, "mean": self.mean, "iqm": self.iqm, "ci95": interval,
                "values": list(self.values)}  # fmt: skip


def bootstrap_interval(values: np.ndarray, *, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of the `CONFIDENCE` percentile-bootstrap interval of the mean along `axis`
    (the runs); 2 or more runs."""
    result = stats.bootstrap(
        (values,),
        np.mean,
        axis=axis,
        n_resamples=RESAMPLES,
        batch=1_000,  # bounds memory when many points are resampled at once (`rlp plot`)
        confidence_level=CONFIDENCE,
        method="percentile",
        rng=np.random.default_rng(RNG_SEED),
    )
    return result.confidence_interval.low, result.confidence_interval.high


def seed_stats(values: Sequence[float]) -> SeedStats:
    """Mean, IQM and interval of one metric's final values (one per seed, at least one)."""
    array = np.asarray(values, dtype=float)
    interval = None
    if array.size >= 2:
        low, high = bootstrap_interval(array)
        interval = (float(low), float(high))
    return SeedStats(
        values=tuple(float(v) for v in array),
        mean=float(array.mean()),
        iqm=float(stats.trim_mean(array, IQM_TRIM)),
        ci95=interval,
    )
