"""Metric sinks: metrics.jsonl (always), TensorBoard and W&B (per spec), same keys in each."""

import json
import os
from pathlib import Path
from typing import Any

from loguru import logger

from rl_platform.spec import ExperimentSpec
from rl_platform.storage.layout import METRICS_FILE
from rl_platform.utils.secrets import mask_secrets

STEP_KEY = "env_steps"


class MetricSinks:
    """Fan out one metrics dict per iteration to every enabled sink."""

    def __init__(self, run_dir: Path, spec: ExperimentSpec, *, resume_iteration: int = 0) -> None:
        self.jsonl_path = run_dir / METRICS_FILE
        _truncate_after(self.jsonl_path, resume_iteration)
        self._jsonl = self.jsonl_path.open("a", encoding="utf-8")
        self._tb = None
        self._wandb = None
        if spec.logging.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(log_dir=str(run_dir / "tensorboard"))
        if spec.logging.wandb != "off":
            self._wandb = _start_wandb(run_dir, spec)

    def write(self, metrics: dict[str, float]) -> None:
        self._jsonl.write(json.dumps(metrics, allow_nan=True) + "\n")
        self._jsonl.flush()
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


def _truncate_after(path: Path, iteration: int) -> None:
    """On resume, drop lines written after the restored checkpoint so the log stays consistent."""
    if not path.is_file():
        return
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            if int(json.loads(line).get("iteration", 0)) <= iteration:
                kept.append(line)
        except (ValueError, AttributeError):
            continue
    path.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")


def _start_wandb(run_dir: Path, spec: ExperimentSpec) -> Any:
    try:
        import wandb
    except ImportError:
        logger.warning("wandb is not installed; W&B logging is off")
        return None
    os.environ.setdefault("WANDB_SILENT", "true")
    return wandb.init(
        project=spec.logging.project,
        name=f"{spec.name}-{run_dir.name}",
        tags=list(spec.logging.tags),
        dir=str(run_dir),
        mode=spec.logging.wandb,
        config=mask_secrets(spec.dump()),
        resume="allow",
        id=f"{spec.name}-{run_dir.name}",
    )
