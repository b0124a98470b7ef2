"""Metric sinks: metrics.jsonl (always), TensorBoard and W&B (per spec), same keys in each."""

import os
from pathlib import Path
from typing import Any, Protocol

from loguru import logger

from rl_platform.spec import ExperimentSpec
from rl_platform.storage.evaluation_rows import truncate_evaluations_after
from rl_platform.storage.metrics_rows import MetricsLog, truncate_metrics_after
from rl_platform.utils.secrets import mask_secrets

STEP_KEY = "env_steps"


METRICS_ROW_META_KEY = "metrics_row"
"""A checkpoint's copy of its iteration's metrics.jsonl row (perf/* aside: they are measured
after the checkpoint is written)."""
EVALUATION_ROW_META_KEY = "evaluation_row"
"""A checkpoint's copy of its evaluation.jsonl row."""
BEST_METRIC_META_KEY = "best_metric"
"""The `eval/...` key that decided `best` when the checkpoint was written."""


class ResumePosition(Protocol):
    iteration: int
    env_steps: int


class MetricSinks:
    """Fan out one metrics dict per iteration to every enabled sink."""

    def __init__(
        self, run_dir: Path, spec: ExperimentSpec, *, resume_at: ResumePosition | None = None
    ) -> None:
        """`resume_at`: the restored checkpoint's position; every sink drops what was logged
        after it (a resume from an older checkpoint rewinds the run's logs to it)."""
        if resume_at is not None:
            truncate_metrics_after(run_dir, resume_at.iteration)
            truncate_evaluations_after(run_dir, resume_at.iteration)
        self._jsonl = MetricsLog(run_dir)
        self._tb = None
        self._wandb = None
        if spec.logging.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            # purge_step drops events at or after it; ours are keyed by env steps (STEP_KEY).
            purge = resume_at.env_steps + 1 if resume_at is not None else None
            self._tb = SummaryWriter(log_dir=str(run_dir / "tensorboard"), purge_step=purge)
        if spec.logging.wandb != "off":
            self._wandb = _start_wandb(run_dir, spec, resume_at)

    def write(self, metrics: dict[str, float]) -> None:
        self._jsonl.append(metrics)
        step = int(metrics.get(STEP_KEY, 0))
        if self._tb is not None:
            for key, value in metrics.items():
                self._tb.add_scalar(key, value, global_step=step)
        if self._wandb is not None:
            self._wandb.log(metrics, step=step)

    def close(self) -> None:
        self._jsonl.close()
        if self._tb is not None:
            self._tb.close()
        if self._wandb is not None:
            self._wandb.finish()


def _start_wandb(run_dir: Path, spec: ExperimentSpec, resume_at: ResumePosition | None) -> Any:
    try:
        import wandb
    except ImportError:
        logger.warning("wandb is not installed; W&B logging is off")
        return None
    os.environ.setdefault("WANDB_SILENT", "true")
    run_id = f"{spec.name}-{run_dir.name}"
    common = {
        "project": spec.logging.project,
        "name": run_id,
        "tags": list(spec.logging.tags),
        "dir": str(run_dir),
        "mode": spec.logging.wandb,
        "config": mask_secrets(spec.dump()),
    }
    if resume_at is not None and spec.logging.wandb == "online":
        # W&B's rewind: the run continues from the checkpoint's step, later steps archived.
        try:
            return wandb.init(**common, resume_from=f"{run_id}?_step={resume_at.env_steps}")
        except Exception as exc:  # rewind is not enabled for every W&B account
            logger.warning(
                "W&B could not rewind to step {} ({}); resuming", resume_at.env_steps, exc
            )
    return wandb.init(**common, resume="allow", id=run_id)
