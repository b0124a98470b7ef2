"""Stop conditions and checkpoint cadence (pure; the first stop condition reached wins)."""

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from rl_platform.spec.sections import CheckpointSpec, StopSpec


@dataclass(frozen=True)
class CheckpointMarks:
    """Points on one progress axis where the run checkpoints, at the first iteration that
    reaches each. A halving search's rungs (`rl_platform.search.halving`): Tune pauses a trial
    at the result that crosses a rung and later resumes it from the checkpoint reported with
    that very result (Tune's save of a function trainable returns the last reported one)."""

    axis: Literal["env_steps", "iteration"]
    values: tuple[int, ...]

    def passed(self, since: int, now: int) -> bool:
        """Whether a mark lies in `(since, now]`."""
        return any(since < mark <= now for mark in self.values)


def reached_stop(stop: StopSpec, metrics: Mapping[str, float]) -> str | None:
    """The stop condition an iteration's metrics row meets, or None. `stop.minutes` aside: it
    counts this process's time (`StopTracker`), so a row alone cannot meet it. A resume asks
    this of its checkpoint's row: a run already there trains nothing (rl_platform/run/train.py)."""
    if stop.iterations is not None and metrics["iteration"] >= stop.iterations:
        return f"iterations >= {stop.iterations}"
    if stop.env_steps is not None and metrics["env_steps"] >= stop.env_steps:
        return f"env_steps >= {stop.env_steps}"
    ret = metrics.get("train/episode_return_mean")
    if stop.return_mean is not None and ret is not None and ret >= stop.return_mean:
        return f"return_mean >= {stop.return_mean}"
    for key, target in (stop.eval or {}).items():
        value = metrics.get(f"eval/{key}")  # present only in iterations that evaluated
        if value is not None and value >= target:
            return f"eval/{key} {value:.3g} >= {target}"
    return None


class StopTracker:
    def __init__(
        self,
        stop: StopSpec,
        checkpoint: CheckpointSpec,
        *,
        env_steps: int = 0,
        iteration: int = 0,
        marks: CheckpointMarks | None = None,
    ) -> None:
        """`env_steps`, `iteration`: where the run starts (a resume's checkpoint)."""
        self.stop, self.checkpoint, self.marks = stop, checkpoint, marks
        self.started = time.monotonic()
        self.last_checkpoint_time = self.started
        self.last_checkpoint_env_steps = env_steps
        self.last_checkpoint_iteration = iteration

    def stop_reason(self, metrics: dict[str, float]) -> str | None:
        minutes = self.stop.minutes
        if minutes is not None and time.monotonic() - self.started >= minutes * 60:
            return reached_stop(self.stop, metrics) or f"minutes >= {minutes}"
        return reached_stop(self.stop, metrics)

    def checkpoint_due(self, iteration: int, env_steps: int = 0) -> bool:
        every_iter, every_min = self.checkpoint.every_iterations, self.checkpoint.every_minutes
        every_steps = self.checkpoint.every_env_steps
        if every_iter is not None and iteration % every_iter == 0:
            return True
        if every_steps is not None and env_steps - self.last_checkpoint_env_steps >= every_steps:
            return True
        if self._reached_mark(iteration, env_steps):
            return True
        return (
            every_min is not None and time.monotonic() - self.last_checkpoint_time >= every_min * 60
        )

    def _reached_mark(self, iteration: int, env_steps: int) -> bool:
        # Since the last checkpoint: one taken at or after a mark covers it.
        if self.marks is None:
            return False
        if self.marks.axis == "iteration":
            return self.marks.passed(self.last_checkpoint_iteration, iteration)
        return self.marks.passed(self.last_checkpoint_env_steps, env_steps)

    def mark_checkpoint(self, iteration: int, env_steps: int = 0) -> None:
        self.last_checkpoint_time = time.monotonic()
        self.last_checkpoint_env_steps = env_steps
        self.last_checkpoint_iteration = iteration
