"""Seeds and spread for the benchmarks that make a claim (issue #22).

Every such script runs `--seeds` (three by default; `--quick` runs the first only) and reports
each ratio as its median, minimum and maximum over the seeds. A goal counts as met only when
the median meets it: one lucky seed is an anecdote, not a result. Differences between models
are also given as a mean with a 95% bootstrap interval over seeds (`bootstrap_interval`).

    from benchmarks.common import add_seed_options, ratio_line, seeds_to_run
"""

import argparse
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_SEEDS = (0, 1, 2)


def add_seed_options(parser: argparse.ArgumentParser, *, quick_help: str = "") -> None:
    """`--seeds S [S ...]` (default 0 1 2) and `--quick` (the first seed only, plus whatever
    else the script shrinks: `quick_help`)."""
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=list(DEFAULT_SEEDS),
        help="seeds to run (default: 0 1 2); ratios are reported as median, min and max",
    )
    parser.add_argument(
        "--quick", action="store_true", help=f"one seed only (the first){quick_help}"
    )


def seeds_to_run(args: argparse.Namespace) -> list[int]:
    return list(args.seeds[:1] if args.quick else args.seeds)


@dataclass(frozen=True)
class Spread:
    """One quantity over seeds (or rounds)."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)

    def meets(self, goal: float, *, at_most: bool) -> bool:
        """The median meets the goal (`<= goal` when `at_most`, else `>= goal`)."""
        return self.median <= goal if at_most else self.median >= goal

    def as_dict(self) -> dict[str, object]:
        return {
            "n": len(self.values),
            "median": self.median,
            "min": self.low,
            "max": self.high,
            "values": list(self.values),
        }


def ratio_line(
    name: str,
    values: Sequence[float | None],
    *,
    goal: float | None = None,
    at_most: bool = True,
    unit: str = "seeds",
) -> str:
    """`name: median m (min a, max b) over n seeds; goal <= g: met (median)`.

    A `None` value (the run missed its target within the budget) is counted as missing and
    named; the goal is then judged on the others only if they are still a majority."""
    present = [float(v) for v in values if v is not None]
    missing = len(values) - len(present)
    if not present:
        return f"{name}: n/a (no {unit[:-1]} reached the target)"
    spread = Spread(tuple(present))
    text = (
        f"{name}: median {_fmt(spread.median)} (min {_fmt(spread.low)}, "
        f"max {_fmt(spread.high)}) over {len(present)} {unit}"
    )
    if missing:
        text += f", {missing} without a result"
    if goal is not None:
        sign = "<=" if at_most else ">="
        majority = len(present) > len(values) / 2
        verdict = "met" if majority and spread.meets(goal, at_most=at_most) else "NOT met"
        text += f"; goal {sign} {goal:g}: {verdict} (median)"
    return text


def _fmt(value: float) -> str:
    """Ratios with three decimals, counts and seconds whole."""
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3f}"


def bootstrap_interval(
    values: Sequence[float], *, confidence: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of `values` (seeds drawn with
    replacement, `resamples` times; Efron & Tibshirani 1993, ch. 13); None with fewer than two
    values, where no interval can be drawn. With few seeds the interval is narrow for its
    confidence (the bootstrap cannot see beyond the seeds it has): read it as a spread."""
    if len(values) < 2:
        return None
    data = np.asarray(values, np.float64)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(len(data), size=(resamples, len(data)))].mean(axis=1)
    tail = 100.0 * (1.0 - confidence) / 2.0
    low, high = np.percentile(means, [tail, 100.0 - tail])
    return float(low), float(high)
