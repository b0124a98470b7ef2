"""Aggregate episode records into the numbers `rlp eval` and `rlp run` report (plain dicts).

`SeatTally` folds one policy's seats in as episodes finish and keeps only running sums (count,
mean and squared deviations by Welford's update, min, max, outcome and ending counts), so a
summary of `-n 1000000000` episodes holds as little memory as one of ten. `summarize` and
`head_to_head` are the same tally over a list of records.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rl_platform.evaluation.rollout import EpisodeRecord

OUTCOMES = ("win", "draw", "loss")


@dataclass
class RunningStats:
    """Mean, population std, min and max of a stream of numbers (Welford's update)."""

    count: int = 0
    mean: float = 0.0
    squares: float = 0.0
    """Sum of squared deviations from the running mean."""
    low: float = math.inf
    high: float = -math.inf

    def add(self, value: float) -> None:
        self.count += 1
        delta = value - self.mean
        self.mean += delta / self.count
        self.squares += delta * (value - self.mean)
        self.low, self.high = min(self.low, value), max(self.high, value)

    def describe(self, prefix: str) -> dict[str, float]:
        """`{prefix}_mean/_std/_min/_max`; empty for an empty stream."""
        if not self.count:
            return {}
        return {
            f"{prefix}_mean": self.mean,
            f"{prefix}_std": math.sqrt(max(self.squares, 0.0) / self.count),
            f"{prefix}_min": self.low,
            f"{prefix}_max": self.high,
        }


@dataclass
class SeatTally:
    """Running summary of every seat policy `key` played, fed one record at a time."""

    key: str
    seats: int = 0
    returns: RunningStats = field(default_factory=RunningStats)
    lengths: RunningStats = field(default_factory=RunningStats)
    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    endings: dict[str, int] = field(default_factory=dict)
    components: dict[str, float] = field(default_factory=dict)
    cut: int = 0
    versus: dict[str, dict[str, int]] = field(default_factory=dict)
    """Two-player games: opponent key -> outcome counts of the decided games."""

    def add(self, record: EpisodeRecord) -> None:
        for agent, owner in record.seats.items():
            if owner == self.key:
                self._add_seat(record, agent)

    def add_all(self, records: Iterable[EpisodeRecord]) -> "SeatTally":
        for record in records:
            self.add(record)
        return self

    def _add_seat(self, record: EpisodeRecord, agent: str) -> None:
        self.seats += 1
        self.returns.add(record.returns.get(agent, 0.0))
        self.lengths.add(float(record.length))
        outcome = record.outcomes.get(agent)
        if outcome in self.outcomes:
            self.outcomes[outcome] += 1
        if record.ended_by is not None:
            self.endings[record.ended_by] = self.endings.get(record.ended_by, 0) + 1
        for name, value in record.components.get(agent, {}).items():
            self.components[name] = self.components.get(name, 0.0) + value
        self.cut += bool(record.truncated_by_limit)
        others = [k for a, k in record.seats.items() if a != agent]
        if len(others) == 1 and outcome in OUTCOMES:
            counts = self.versus.setdefault(others[0], dict.fromkeys(OUTCOMES, 0))
            counts[outcome] += 1

    def summary(self) -> dict[str, Any]:
        """Return, length, outcome rates and reward-component means of the seats."""
        out: dict[str, Any] = {"seats": self.seats}
        out |= self.returns.describe("return")
        out |= self.lengths.describe("length")
        decided = sum(self.outcomes.values())
        if decided:
            out |= {f"{name}_rate": self.outcomes[name] / decided for name in OUTCOMES}
        ended = sum(self.endings.values())
        if ended:  # envs that say how games end (the duel): the share decided on the clock
            out["timed_out_rate"] = self.endings.get("time", 0) / ended
        out["reward_components"] = {
            name: total / self.seats for name, total in sorted(self.components.items())
        }
        if self.cut:
            out["cut_by_max_steps"] = self.cut
        return out

    def head_to_head(self) -> dict[str, dict[str, Any]]:
        """`{opponent key: {games, win_rate, draw_rate, loss_rate}}`."""
        table = {}
        for other, counts in sorted(self.versus.items()):
            games = sum(counts.values())
            table[other] = {
                "games": games,
                **{f"{name}_rate": counts[name] / games for name in OUTCOMES},
            }
        return table


def summarize(records: Iterable[EpisodeRecord], key: str) -> dict[str, Any]:
    """`SeatTally.summary` of policy `key` over `records`."""
    return SeatTally(key).add_all(records).summary()


def head_to_head(records: Iterable[EpisodeRecord], key: str) -> dict[str, dict[str, Any]]:
    """Two-player games: `{opponent key: {games, win_rate, draw_rate, loss_rate}}` for `key`."""
    return SeatTally(key).add_all(records).head_to_head()
