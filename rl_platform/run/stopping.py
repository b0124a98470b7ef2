"""Stop conditions and checkpoint cadence (pure; the first stop condition reached wins)."""

import time
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
        stop = self.stop
        if stop.iterations is not None and metrics["iteration"] >= stop.iterations:
            return f"iterations >= {stop.iterations}"
        if stop.env_steps is not None and metrics["env_steps"] >= stop.env_steps:
            return f"env_steps >= {stop.env_steps}"
        ret = metrics.get("train/episode_return_mean")
        if stop.return_mean is not None and ret is not None and ret >= stop.return_mean:
            return f"return_mean >= {stop.return_mean}"
        if stop.minutes is not None and time.monotonic() - self.started >= stop.minutes * 60:
            return f"minutes >= {stop.minutes}"
        for key, target in (stop.eval or {}).items():
            value = metrics.get(f"eval/{key}")  # present only in iterations that evaluated
            if value is not None and value >= target:
                return f"eval/{key} {value:.3g} >= {target}"
        return None

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
