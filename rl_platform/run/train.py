"""`rlp train` and `rl_platform.train`: the training loop around a stock RLlib Algorithm."""

import functools
import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ray
from loguru import logger

from rl_platform.errors import TrainingHealthError
from rl_platform.rllib_config import build_algorithm_config
from rl_platform.run.algorithm_state import restore_algorithm, snapshot_algorithm
from rl_platform.run.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.run.env_runner_health import check_env_runners
from rl_platform.run.episode_metrics import EpisodeMetricsCallback
from rl_platform.run.metrics import extract_metrics, is_nonfinite_update
from rl_platform.run.progress import ProgressLine
from rl_platform.run.run_dir import add_file_log, existing_run_dir, new_run_dir, write_spec
from rl_platform.run.signals import StopRequest
from rl_platform.run.stopping import StopTracker
from rl_platform.run.trial_metrics import TrialMetrics
from rl_platform.spec import ExperimentSpec
from rl_platform.utils.atomic import write_json_atomic


@dataclass
class RunResult:
    """What a finished run reports: where it lives and its headline numbers."""

    run_dir: Path
    iterations: int
    env_steps: int
    trial_metrics: dict[str, Any]
    stop_reason: str
    last_checkpoint: Path | None = None
    history: list[dict[str, float]] = field(default_factory=list)


def ensure_ray(num_cpus: int | None = None) -> None:
    """Join the cluster in RAY_ADDRESS (set inside Ray jobs), else start an embedded local Ray.

    `address="local"` never joins a stale cluster left running on a laptop by accident.
    """
    if ray.is_initialized():
        return
    if os.environ.get("RAY_ADDRESS"):
        ray.init(log_to_driver=True)
    else:
        ray.init(address="local", include_dashboard=False, num_cpus=num_cpus, log_to_driver=True)


def _with_callbacks(config: Any, spec: ExperimentSpec) -> Any:
    return config.callbacks(EpisodeMetricsCallback)


def train(
    spec: ExperimentSpec,
    *,
    out_dir: str | Path = "runs",
    resume: str | Path | None = None,
    extensions: list[Any] | None = None,
) -> RunResult:
    """Train `spec` until a stop condition; checkpoints, metrics and logs go to the run folder."""
    run_dir = existing_run_dir(resume) if resume else new_run_dir(out_dir, spec.name)
    log_handle = add_file_log(run_dir)
    try:
        write_spec(run_dir, spec)
        ensure_ray()
        stop_request = StopRequest().install()  # after ray.init, which replaces SIGTERM handling
        try:
            return _train_in(run_dir, spec, stop_request, resume is not None, extensions or [])
        finally:
            stop_request.restore()
    finally:
        logger.remove(log_handle)


def _train_in(
    run_dir: Path,
    spec: ExperimentSpec,
    stop_request: StopRequest,
    resuming: bool,
    extensions: list[Any],
) -> RunResult:
    if spec.league is not None:
        from rl_platform.league.callback import league_extension

        extensions = [*extensions, functools.partial(league_extension, run_dir=run_dir)]
    store = CheckpointStore(run_dir / "checkpoints", keep_last=spec.checkpoint.keep_last)
    latest = store.latest() if resuming else None
    # Verify the checkpoint's hashes before building anything: a tampered one fails fast.
    checkpoint = load_checkpoint(latest) if latest is not None else None
    if spec.resources.torch_threads is not None:
        import torch

        torch.set_num_threads(spec.resources.torch_threads)
    config = build_algorithm_config(spec, extensions=[_with_callbacks, *extensions])
    algo = config.build_algo()
    try:
        start_iteration = 0
        if checkpoint is not None:
            start_iteration = restore_algorithm(algo, checkpoint)
            for participant in checkpoint_participants(algo):
                participant.restore_parts(checkpoint.parts, algorithm=algo)
            logger.info("resumed from {} at iteration {}", checkpoint.path.name, start_iteration)
        loop = _Loop(run_dir, spec, algo, store, stop_request, start_iteration)
        return loop.run()
    finally:
        algo.stop()


class _Loop:
    """One training run's iteration loop and its bookkeeping."""

    def __init__(self, run_dir, spec, algo, store, stop_request, start_iteration) -> None:
        from rl_platform.run.sinks import MetricSinks

        self.run_dir, self.spec, self.algo, self.store = run_dir, spec, algo, store
        self.stop_request = stop_request
        self.iteration = start_iteration
        self.sinks = MetricSinks(run_dir, spec, resume_iteration=start_iteration)
        self.progress = ProgressLine(spec.name, spec.stop)
        self.stopper = StopTracker(spec.stop, spec.checkpoint)
        self.trial = TrialMetrics()
        self.env_steps = _lifetime_env_steps(algo)
        self.last_checkpoint: Path | None = None
        self.history: list[dict[str, float]] = []

    def run(self) -> RunResult:
        reason = "unknown"
        try:
            while True:
                metrics = self._one_iteration()
                if (reason := self.stopper.stop_reason(metrics)) or self.stop_request.requested:
                    reason = reason or f"signal {self.stop_request.signal_name}"
                    break
                if self.stopper.checkpoint_due(self.iteration):
                    self._save()
        finally:
            self.progress.close()
            self.sinks.close()
        if self.spec.checkpoint.at_end:
            self._save()
        return self._finish(reason)

    def _one_iteration(self) -> dict[str, float]:
        result = self.algo.train()
        self.iteration = int(result.get("training_iteration", self.iteration + 1))
        metrics = extract_metrics(result, previous_env_steps=self.env_steps)
        self.env_steps = int(metrics["env_steps"])
        self._check_health(metrics)
        check_env_runners(self.algo, iteration=self.iteration)
        self.sinks.write(metrics)
        self.progress.update(metrics)
        self.trial.observe(metrics)
        self.history.append(metrics)
        return metrics

    def _check_health(self, metrics: dict[str, float]) -> None:
        if self.spec.health.stop_on_nan and is_nonfinite_update(metrics):
            self.sinks.write({**metrics, "health/nonfinite": 1.0})
            latest = self.store.latest()
            raise TrainingHealthError(
                f"iteration {self.iteration}: a loss or gradient became NaN/Inf; "
                "the update was not "
                f"applied and training stopped. Last good checkpoint: {latest or 'none'}. "
                "Try a lower training.lr, a grad_clip, or check the env's rewards."
            )
        entropy = metrics.get("train/entropy")
        floor = self.spec.health.min_entropy
        if floor is not None and entropy is not None and entropy < floor:
            metrics["health/entropy_collapse"] = 1.0
            logger.warning("policy entropy {:.4f} fell below health.min_entropy={}", entropy, floor)

    def _save(self) -> None:
        parts = snapshot_algorithm(self.algo)
        for participant in checkpoint_participants(self.algo):
            parts |= participant.checkpoint_parts()
        meta = {"env_steps": self.env_steps, "saved_at": time.time(), "spec_name": self.spec.name}
        self.last_checkpoint = self.store.save(iteration=self.iteration, parts=parts, meta=meta)
        self.stopper.mark_checkpoint(self.iteration)
        logger.info("checkpoint {}", self.last_checkpoint)

    def _finish(self, reason: str) -> RunResult:
        summary = self.trial.summary(env_steps=self.env_steps, iterations=self.iteration)
        write_json_atomic(self.run_dir / "trial_metrics.json", summary)
        logger.info("stopped: {}", reason)
        logger.info("trial_metrics: {}", TrialMetrics.format_line(summary))
        return RunResult(
            run_dir=self.run_dir,
            iterations=self.iteration,
            env_steps=self.env_steps,
            trial_metrics=summary,
            stop_reason=reason,
            last_checkpoint=self.last_checkpoint,
            history=self.history,
        )


def checkpoint_participants(algo: Any) -> list[Any]:
    """Driver callbacks whose state lives outside RLlib's (the league): saved as extra parts."""
    callbacks = algo.callbacks if isinstance(algo.callbacks, list) else [algo.callbacks]
    return [cb for cb in callbacks if hasattr(cb, "checkpoint_parts")]


def _lifetime_env_steps(algo: Any) -> int:
    value = algo.metrics.peek("num_env_steps_sampled_lifetime", default=0) if algo.metrics else 0
    return int(value) if value is not None and math.isfinite(float(value)) else 0


def read_metrics(run_dir: str | Path) -> list[dict[str, float]]:
    path = Path(run_dir) / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
