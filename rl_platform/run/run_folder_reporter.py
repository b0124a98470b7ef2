"""The run folder while a run trains: its metric rows, checkpoints, `best`, and the result.

`RunFolderReporter` is what `rlp train`'s loop (run/loop.py) reports to: each iteration's row
to the metric sinks, each checkpoint saved (and uploaded with `logging.storage`), the best
checkpoint by the spec's metric, evaluation rows, and at the end the `RunResult`.
`restore_rows` puts back the rows of a resumed checkpoint that a kill lost.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loguru import logger

from rl_platform.run.health import HealthStatus, HealthVerdict
from rl_platform.run.loop import (
    Checkpoint,
    LoopOutcome,
    LoopStart,
)
from rl_platform.run.progress import ProgressLine
from rl_platform.run.sinks import (
    BEST_METRIC_META_KEY,
    EVALUATION_ROW_META_KEY,
    METRICS_ROW_META_KEY,
    MetricSinks,
)
from rl_platform.run.trial_metrics import TrialMetrics
from rl_platform.spec import ExperimentSpec
from rl_platform.storage.checkpoints import CheckpointStore, LoadedCheckpoint, checkpoint_name
from rl_platform.storage.evaluation_rows import (
    append_evaluation_row,
    restore_evaluation_row,
    truncate_evaluations_after,
)
from rl_platform.storage.layout import (
    TRIAL_METRICS_FILE,
)
from rl_platform.storage.metrics_rows import restore_metrics_row, truncate_metrics_after
from rl_platform.storage.run_upload import RunUploader
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
    stored_at: str | None = None
    """Where `logging.storage` keeps the run (`rlp pull` takes it), if the spec sets one and
    the final upload reached it."""
    not_stored_at: str | None = None
    """`logging.storage` when its final upload failed: the run is only in `run_dir`."""
    already_at_stop: bool = False
    """A `resume` whose checkpoint already met the spec's `stop`: nothing was trained, and
    nothing written beyond putting back the checkpoint's own rows if a kill lost them."""


class RunFolderReporter:
    """Where `rlp train` reports: metric sinks, the progress line, checkpoints in the run folder,
    and the `trial_metrics` summary at the end."""

    def __init__(
        self,
        run_dir: Path,
        spec: ExperimentSpec,
        store: CheckpointStore,
        start: LoopStart,
        *,
        uploader: RunUploader | None = None,
        resumed: LoadedCheckpoint | None = None,
    ) -> None:
        self.run_dir, self.store, self.uploader = run_dir, store, uploader
        if resumed is not None:  # before the sinks open the files they append to
            restore_rows(run_dir, store, resumed)
        self.sinks = MetricSinks(run_dir, spec, resume_at=start if start.iteration else None)
        self.progress = ProgressLine(spec.name, spec.stop)
        self.trial = TrialMetrics(start_env_steps=start.env_steps)
        self.last_checkpoint: Path | None = None
        self.history: list[dict[str, float]] = []

    def report(
        self,
        metrics: dict[str, float],
        *,
        verdict: HealthVerdict,
        stop_reason: str,
        checkpoint: Checkpoint | None,
    ) -> None:
        self.sinks.write(metrics)
        self.progress.update(metrics)
        self.trial.observe(metrics)
        self.history.append(metrics)
        if checkpoint is not None:
            logger.info("checkpoint {}", self.last_checkpoint)
            if self.uploader is not None:
                self.uploader.after_checkpoint()

    def save(self, checkpoint: Checkpoint) -> None:
        """The checkpoint and its evaluation row, before the metrics row of its iteration;
        the checkpoint holds a copy of both rows (`restore_rows`)."""
        row = None
        meta = checkpoint.meta
        if checkpoint.evaluation is not None:
            row = {
                "iteration": checkpoint.iteration,
                "env_steps": meta["env_steps"],
                "checkpoint": checkpoint_name(checkpoint.iteration),
                **checkpoint.evaluation,
            }
            meta = {
                **meta,
                EVALUATION_ROW_META_KEY: row,
                BEST_METRIC_META_KEY: checkpoint.best_metric,
            }
        self.last_checkpoint = self.store.save(
            iteration=checkpoint.iteration, parts=checkpoint.parts, meta=meta
        )
        if row is not None:
            self._record_evaluation(row, checkpoint.best_metric, self.last_checkpoint)

    def _record_evaluation(self, row: dict[str, Any], metric: str | None, saved: Path) -> None:
        """A row in evaluation.jsonl; `best` moves to `saved` when it beats the best so far."""
        append_evaluation_row(self.run_dir, row)
        mark_best(self.store, row, metric, saved)

    def close(self) -> None:
        self.progress.close()
        self.sinks.close()

    def finish(self, outcome: LoopOutcome) -> RunResult:
        summary = self.trial.summary(env_steps=outcome.env_steps, iterations=outcome.iteration)
        write_json_atomic(self.run_dir / TRIAL_METRICS_FILE, summary)
        logger.info("stopped: {}", outcome.stop_reason)
        if outcome.verdict.status is HealthStatus.COLLAPSED:
            kept = self.store.latest()
            logger.warning(
                "health.on_collapse=stop: the collapsed policy was not saved; latest stays {}",
                kept.name if kept is not None else "none (no healthy checkpoint yet)",
            )
        logger.info("trial_metrics: {}", TrialMetrics.format_line(summary))
        return RunResult(
            run_dir=self.run_dir,
            iterations=outcome.iteration,
            env_steps=outcome.env_steps,
            trial_metrics=summary,
            stop_reason=outcome.stop_reason,
            last_checkpoint=self.last_checkpoint,
            history=self.history,
        )


def restore_rows(run_dir: Path, store: CheckpointStore, checkpoint: LoadedCheckpoint) -> None:
    """On resume: the rows after the checkpoint dropped, and its own metrics and evaluation
    rows put back where a kill between the checkpoint and its rows (or a torn last line)
    lost them. Files that need neither are left as they are."""
    iteration = int(checkpoint.meta["iteration"])
    truncate_metrics_after(run_dir, iteration)
    truncate_evaluations_after(run_dir, iteration)
    restore_metrics_row(run_dir, checkpoint.meta.get(METRICS_ROW_META_KEY))
    row = checkpoint.meta.get(EVALUATION_ROW_META_KEY)
    if restore_evaluation_row(run_dir, row):
        mark_best(store, row, checkpoint.meta.get(BEST_METRIC_META_KEY), checkpoint.path)


def mark_best(store: CheckpointStore, row: dict[str, Any], metric: str | None, saved: Path) -> None:
    """`best` moves to `saved` when its evaluation row beats the best so far."""
    value = row.get(metric) if metric else None
    if value is None:
        return
    best = store.best_record()
    if best is None or best["metric"] != metric or value > best["value"]:
        store.mark_best(saved, metric=metric, value=value)
        logger.info("best: {} ({} = {:.3g})", saved.name, metric, value)
