"""Stop conditions and checkpoint cadence (pure; the first stop condition reached wins)."""

import time

from rl_platform.spec.sections import CheckpointSpec, StopSpec


class StopTracker:
    def __init__(self, stop: StopSpec, checkpoint: CheckpointSpec, *, env_steps: int = 0) -> None:
        """`env_steps`: where the run starts (a resume's checkpoint)."""
        self.stop, self.checkpoint = stop, checkpoint
        self.started = time.monotonic()
        self.last_checkpoint_time = self.started
        self.last_checkpoint_env_steps = env_steps

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
        return (
            every_min is not None and time.monotonic() - self.last_checkpoint_time >= every_min * 60
        )

    def mark_checkpoint(self, iteration: int, env_steps: int = 0) -> None:
        self.last_checkpoint_time = time.monotonic()
        self.last_checkpoint_env_steps = env_steps
