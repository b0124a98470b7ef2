"""Synchronous successive halving: which trial is at which rung, and which go on (pure).

Successive halving (Jamieson & Talwalkar 2016, https://arxiv.org/abs/1502.07943; the
synchronous SHA of Li et al. 2020, https://arxiv.org/abs/1810.05934, Algorithm 1) judges a
whole cohort at once. Rungs lie at `grace_period * reduction_factor**k` below `max_t`. A trial
that reaches its rung waits (Tune pauses it) until every trial of the cohort has reported
there or has ended; then the best `ceil(n / reduction_factor)` of the `n` at the rung go on
and the rest stop. Past the last rung the winners run to `max_t`.

Why not Tune's ASHA: it is asynchronous, so with few trials at a time the first trials reach
each rung unopposed and go on whatever they return, while later ones are cut by thresholds
taken from few results (docs/notes/asha_vs_full.md).

`rl_platform.search.halving_scheduler` is the Tune adapter; this module imports no Ray.
"""

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from rl_platform.run.stopping import CheckpointMarks
from rl_platform.search.budget import TrialBudget

WORST = -math.inf
_LOOP_AXIS: dict[str, Literal["env_steps", "iteration"]] = {
    "env_steps": "env_steps",
    "training_iteration": "iteration",  # Tune's count of reports, one per loop iteration
}


def rungs(budget: TrialBudget) -> tuple[int, ...]:
    """`grace_period * reduction_factor**k` below `max_t`, rounded up: on an integer axis
    `t >= ceil(r)` is `t >= r`. Empty when the grace period is `max_t` (no early stopping)."""
    found = []
    k = 0
    while (rung := math.ceil(budget.grace_period * budget.reduction_factor**k)) < budget.max_t:
        found.append(rung)
        k += 1
    return tuple(found)


def rung_marks(budget: TrialBudget) -> CheckpointMarks:
    """Where each trial checkpoints so that a paused trial resumes from its rung."""
    return CheckpointMarks(axis=_LOOP_AXIS[budget.time_attr], values=rungs(budget))


def promotions(contestants: int, reduction_factor: float) -> int:
    """How many of `contestants` go on: ceil(n / reduction_factor), as Tune's HyperBand
    brackets do; ceil rather than floor keeps one more trial at the noisy early rungs, and at
    least one trial always goes on."""
    # rounded first: 6 / 1.2 is 5.000000000000001 in floats
    return max(1, math.ceil(round(contestants / reduction_factor, 9))) if contestants else 0


class TrialState(StrEnum):
    RUNNING = "running"
    """On its way to its next rung, or to `max_t` past the last one."""
    WAITING = "waiting"
    """Reported at its rung; paused until the rung is decided."""
    STOPPED = "stopped"
    """Lost at a rung: the scheduler stops it."""
    ENDED = "ended"
    """Ended on its own (its own stop, collapse, an error) or was stopped."""


@dataclass(frozen=True)
class RungDecision:
    rung: int
    """Index into the rungs."""
    promoted: tuple[str, ...]
    stopped: tuple[str, ...]
    """Trials still alive that lost (ended trials that lost are not listed)."""


@dataclass
class _Entry:
    order: int
    level: int = 0
    """The rung it competes at next; `len(rungs)`: past the last rung."""
    time: float = 0.0
    score: float = WORST
    """Its last result, higher is better (mode applied; NaN and no metric are worst)."""
    recorded: float | None = None
    """Its score at rung `level`, once it has reported there."""
    ended: bool = False
    out: bool = False
    """Done with the contests: lost one, or ended and was judged."""
    lost: bool = False


class HalvingTable:
    """The cohort's rung table; see the module docstring.

    The cohort is every trial `add`ed before `close` (the searcher has created them all: with
    a grid, every grid point times `num_samples`). No rung is decided before `close`, and a
    rung is decided only when no trial of the cohort is still on its way to a lower one.
    An ended trial counts at the rung it was heading for with its last result (worst if it
    never reported the metric) and may take a place there; ties go to trials still alive,
    then to the trial added first.
    """

    def __init__(
        self, *, rungs: tuple[int, ...], reduction_factor: float, mode: Literal["max", "min"]
    ) -> None:
        self.rungs, self.reduction_factor, self.mode = rungs, reduction_factor, mode
        self._entries: dict[str, _Entry] = {}
        self.closed = False

    def add(self, trial_id: str) -> None:
        self._entries.setdefault(trial_id, _Entry(order=len(self._entries)))

    def close(self) -> None:
        """No more trials will join the cohort."""
        self.closed = True

    def score(self, value: float | None) -> float:
        if value is None or math.isnan(value):
            return WORST
        return value if self.mode == "max" else -value

    def report(self, trial_id: str, *, time: float, value: float | None) -> None:
        """A result of a live trial; recorded at its rung if `time` reaches the rung."""
        entry = self._entries[trial_id]
        if entry.ended or entry.lost:
            return
        entry.time, entry.score = time, self.score(value)
        if entry.level < len(self.rungs) and time >= self.rungs[entry.level]:
            entry.recorded = entry.score  # a repeated report (a retry) replaces the record

    def end(self, trial_id: str, *, value: float | None = None) -> None:
        """The trial will report no more; `value`: its final metric, if known."""
        entry = self._entries[trial_id]
        if value is not None and not entry.ended and not entry.lost:
            entry.score = self.score(value)
        entry.ended = True

    def restore(self, trial_id: str, *, time: float, value: float | None, ended: bool) -> None:
        """A trial of a resumed search, from its last result (Tune keeps no scheduler state):
        it counts as having passed every rung below the highest one it reached, and as having
        reported at that one."""
        self.add(trial_id)
        entry = self._entries[trial_id]
        entry.level = max(0, sum(rung <= time for rung in self.rungs) - 1)
        entry.time, entry.score, entry.ended = time, self.score(value), ended
        if self.rungs and time >= self.rungs[entry.level]:
            entry.recorded = entry.score

    def state(self, trial_id: str) -> TrialState:
        entry = self._entries[trial_id]
        if entry.lost:
            return TrialState.STOPPED
        if entry.ended:
            return TrialState.ENDED
        if entry.level < len(self.rungs) and entry.recorded is not None:
            return TrialState.WAITING
        return TrialState.RUNNING

    def decide(self) -> list[RungDecision]:
        """Decide every rung that is complete, lowest first; the decisions made now."""
        decisions = []
        while (rung := self._complete_rung()) is not None:
            decisions.append(self._decide(rung))
        return decisions

    def _complete_rung(self) -> int | None:
        if not self.closed:
            return None
        waiting = [e for e in self._entries.values() if not e.out and e.level < len(self.rungs)]
        if not waiting:
            return None
        lowest = min(e.level for e in waiting)
        at_rung = [e for e in waiting if e.level == lowest]
        return lowest if all(e.recorded is not None or e.ended for e in at_rung) else None

    def _decide(self, rung: int) -> RungDecision:
        contestants = [
            (trial_id, e) for trial_id, e in self._entries.items() if not e.out and e.level == rung
        ]
        ranked = sorted(contestants, key=lambda item: self._rank(item[1]))
        keep = promotions(len(ranked), self.reduction_factor)
        for _, entry in ranked[keep:]:
            entry.out = True
            entry.lost = not entry.ended
        for _, entry in ranked[:keep]:
            self._promote(entry)
        return RungDecision(
            rung=rung,
            promoted=tuple(trial_id for trial_id, _ in ranked[:keep]),
            stopped=tuple(trial_id for trial_id, e in ranked[keep:] if e.lost),
        )

    @staticmethod
    def _rank(entry: _Entry) -> tuple[float, bool, int]:
        score = entry.recorded if entry.recorded is not None else entry.score
        return (-score, entry.ended, entry.order)

    def _promote(self, entry: _Entry) -> None:
        if entry.ended:  # judged where it ended; it has no further rung to reach
            entry.out = True
            return
        entry.level += 1
        # The result that reached this rung may reach the next one too (a rung spacing smaller
        # than one iteration): it is the first result at or past that rung as well.
        reached_next = entry.level < len(self.rungs) and entry.time >= self.rungs[entry.level]
        entry.recorded = entry.score if reached_next else None
