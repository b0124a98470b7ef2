"""One search trial as a Tune function trainable: build the algorithm from the sampled spec,
train, report namespaced metrics, checkpoint in rl_platform's pickle-free format.

Each result carries `trial_status` (ok | collapsed | nan) and `stop_reason` (empty while the
trial runs). A trial stops itself on the spec's own `stop`, on entropy collapse below
`health.min_entropy` and on a NaN/Inf update; the scheduler stops it at rungs and at `max_t`.
A league spec's pool lives in the trial's own folder (`trial_<id>/league`), and its state is
part of every checkpoint, as in `rlp train`.
"""

import functools
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from loguru import logger
from ray import tune

from rl_platform.errors import TrainingHealthError
from rl_platform.rllib_config import build_algorithm_config
from rl_platform.run.algorithm_state import restore_algorithm, snapshot_algorithm
from rl_platform.run.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.run.episode_metrics import EpisodeMetricsCallback
from rl_platform.run.metrics import extract_metrics, is_nonfinite_update
from rl_platform.run.stopping import StopTracker
from rl_platform.run.train import checkpoint_participants
from rl_platform.search.folder import trial_folder
from rl_platform.search.results import STOP_REASON, TRIAL_STATUS
from rl_platform.search.space import apply_sample
from rl_platform.spec import ExperimentSpec


def _with_callbacks(config: Any, spec: ExperimentSpec) -> Any:
    return config.callbacks(EpisodeMetricsCallback)


def _extensions(spec: ExperimentSpec, search_dir: Path) -> list[Any]:
    if spec.league is None:
        return [_with_callbacks]
    from rl_platform.league.callback import league_extension

    # Not Tune's get_trial_dir(): that is a per-session staging folder, and a resumed search
    # must find the pool again. Tune's folder of this trial is stable and unique.
    trial_dir = trial_folder(search_dir, tune.get_context().get_trial_id())
    return [_with_callbacks, functools.partial(league_extension, run_dir=trial_dir)]


def search_trainable(
    config: dict[str, Any], *, base_spec: dict[str, Any], metric: str, search_dir: str
) -> None:
    """Train `base_spec` with the sampled values in `config` until a stop (Tune's or ours)."""
    spec = apply_sample(base_spec, config)
    algo = build_algorithm_config(spec, extensions=_extensions(spec, Path(search_dir)))
    algo = algo.build_algo()
    try:
        _TrialLoop(spec, algo, metric=metric).run()
    finally:
        algo.stop()


class _TrialLoop:
    """The iteration loop of one trial; resumes from Tune's checkpoint after a failure."""

    def __init__(self, spec: ExperimentSpec, algo: Any, *, metric: str) -> None:
        self.spec, self.algo, self.metric = spec, algo, metric
        self.stopper = StopTracker(spec.stop, spec.checkpoint)
        self.iteration, self.env_steps = 0, 0
        checkpoint = tune.get_checkpoint()
        if checkpoint is not None:
            with checkpoint.as_directory() as folder:
                loaded = load_checkpoint(folder)
            self.iteration = restore_algorithm(algo, loaded)
            for participant in checkpoint_participants(algo):  # the league's state
                participant.restore_parts(loaded.parts, algorithm=algo)
            self.env_steps = int(loaded.meta.get("env_steps", 0))
            logger.info("trial resumed at iteration {}", self.iteration)

    def run(self) -> None:
        while True:
            metrics = extract_metrics(self.algo.train(), previous_env_steps=self.env_steps)
            self.iteration, self.env_steps = int(metrics["iteration"]), int(metrics["env_steps"])
            status, reason = self._health(metrics)
            reason = reason or self.stopper.stop_reason(metrics) or ""
            parts = None
            if status != "nan" and (reason or self.stopper.checkpoint_due(self.iteration)):
                try:
                    parts = self._snapshot()
                except TrainingHealthError as exc:
                    status, reason = "nan", str(exc)
            if self.metric not in metrics:
                # Tune refuses results without the metric (no episode has ended yet).
                metrics[self.metric] = math.nan
            self._report({**metrics, TRIAL_STATUS: status, STOP_REASON: reason}, parts)
            if reason:
                return

    def _snapshot(self) -> dict[str, Any]:
        parts = snapshot_algorithm(self.algo)
        for participant in checkpoint_participants(self.algo):
            parts |= participant.checkpoint_parts()
        return parts

    def _health(self, metrics: dict[str, float]) -> tuple[str, str]:
        if self.spec.health.stop_on_nan and is_nonfinite_update(metrics):
            return "nan", "a loss or gradient became NaN/Inf"
        entropy, floor = metrics.get("train/entropy"), self.spec.health.min_entropy
        if floor is not None and entropy is not None and entropy < floor:
            return "collapsed", f"entropy {entropy:.4g} < health.min_entropy {floor}"
        return "ok", ""

    def _report(self, metrics: dict[str, Any], parts: dict[str, Any] | None) -> None:
        if parts is None:
            tune.report(metrics)
            return
        meta = {"env_steps": self.env_steps, "saved_at": time.time(), "spec_name": self.spec.name}
        # Tune copies the folder into the trial's storage during report(); the temp one can go.
        with tempfile.TemporaryDirectory(prefix="rlp-trial-") as tmp:
            path = CheckpointStore(tmp, keep_last=1).save(
                iteration=self.iteration, parts=parts, meta=meta
            )
            self.stopper.mark_checkpoint(self.iteration)
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(str(path)))
