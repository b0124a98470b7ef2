"""Run the seeds of a spec as one Ray Tune experiment: one trial per seed, each training the
spec with its seed in a normal run folder (`rl_platform.run.train.train_in_folder`: the same
`TrainingLoop`, reporter and checkpoints as `rlp train`), as many at once as the cluster's
resources fit; then the aggregate over seeds (`rl_platform.multi_seed.summary`).

A trial reports to Tune once, when its run has ended: the final values of the aggregated
metrics. The aggregate is built from those reports, not from the run folders, so it is complete
even when trials ran on other nodes of a cluster whose disks the driver cannot read.

The console: each trial logs as `rlp train` does, its seed as the label (`12:00:05 seed 1 |
cartpole_ppo | iter 2 | ...`, `utils/console_log.py`), and the driver prints those lines as they
come (`ray_runtime/worker_output.py`: no Ray prefix, no folding of look-alike lines). The full
records, source included, are in each seed's own `train.log`.
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger
from ray import tune
from ray.air.constants import EXPR_ERROR_FILE

from rl_platform.multi_seed.folder import TUNE_DIR, new_seeds_dir, seed_run_dir
from rl_platform.multi_seed.summary import final_values, seeds_summary
from rl_platform.ray_runtime.session import ensure_ray, ray_logs_to
from rl_platform.ray_runtime.worker_output import workers_on_console
from rl_platform.run.train import train_in_folder
from rl_platform.search.budget import actor_bundles, driver_bundle
from rl_platform.spec import ExperimentSpec, validate_spec_data
from rl_platform.storage.layout import LOG_FILE, TRIAL_METRICS_FILE
from rl_platform.storage.run_upload import storage_out
from rl_platform.utils.atomic import write_json_atomic
from rl_platform.utils.console_log import use_console_log
from rl_platform.utils.names import require_utf8_start

SEED_KEY, FINAL_KEY = "seed", "final"
UNFINISHED = "did not finish (stopped before its run ended)"


@dataclass(frozen=True)
class SeedsOutcome:
    parent: Path
    summary: dict[str, Any]
    """What `trial_metrics.json` in `parent` holds."""

    @property
    def failed(self) -> dict[str, str]:
        """Seeds left out of the aggregate, with why."""
        return self.summary["failed"]

    @property
    def interrupted(self) -> bool:
        """Some seeds were stopped (Ctrl+C) before their runs ended."""
        return UNFINISHED in self.failed.values()


def seed_spec(spec_data: dict[str, Any], seed: int) -> ExperimentSpec:
    return validate_spec_data({**spec_data, SEED_KEY: seed}, source=f"--seeds (seed {seed})")


def seed_trainable(
    config: dict[str, Any], *, spec_data: dict[str, Any], parent: str, parent_key: str
) -> None:
    """One seed's run in `parent/seed_<N>`, stored (`logging.storage`) under
    `parent_key/seed_<N>`; its final values go to Tune at the end."""
    seed = int(config[SEED_KEY])
    use_console_log(label=f"seed {seed}")  # this process's console: loguru's format until now
    run_dir = seed_run_dir(parent, seed)
    run_key = f"{parent_key}/{run_dir.name}"
    result = train_in_folder(seed_spec(spec_data, seed), run_dir, run_key=run_key)
    tune.report({FINAL_KEY: final_values(result.history)})


def seed_bundles(spec: ExperimentSpec) -> list[dict[str, float]]:
    """The trial's driver (1 CPU; the GPUs of a local learner, `learners: 0`), then its actors."""
    return [driver_bundle(spec, cpu=1.0), *actor_bundles(spec)]


def _trial_dirname(trial: Any) -> str:
    return seed_run_dir("", trial.config[SEED_KEY]).name


def _failure(result: Any) -> str | None:
    """Why a trial gave no final values: its error's first line, or that it never finished."""
    if result.error is not None:
        # Tune wraps the trainable's exception (RayTaskError, TuneError); `cause` is the
        # original one where Ray kept it.
        cause = getattr(result.error, "cause", None) or result.error
        lines = str(cause).strip().splitlines() or [""]
        where = Path(result.path) / EXPR_ERROR_FILE
        return f"{type(cause).__name__}: {lines[0][:300]} (traceback in {where})"
    if FINAL_KEY not in (result.metrics or {}):
        return UNFINISHED
    return None


def run_seeds(
    spec: ExperimentSpec, seeds: Sequence[int], *, out_dir: str | Path, dashboard: bool = False
) -> SeedsOutcome:
    """Train `spec` once per seed as Tune trials; write and return the aggregate. Ray's notices
    go to the experiment folder's train.log; `dashboard` starts the local Ray with its dashboard."""
    spec, out_dir = storage_out(spec, out_dir)  # `--out s3://...`: each seed's run stored
    for seed in seeds:
        seed_spec(spec.dump(), seed)  # a seed the schema refuses fails before Ray starts
    require_utf8_start(out_dir)
    parent = new_seeds_dir(out_dir, spec, seeds)
    parent_key = parent.relative_to(out_dir.resolve()).as_posix()
    # The trials' lines are their runs' progress (labelled with the seed): they keep the console.
    with ray_logs_to(parent / LOG_FILE), workers_on_console(seed_trainable.__name__):
        ensure_ray(dashboard=dashboard)
        summary = _fit_seeds(spec, seeds, parent, parent_key)
    write_json_atomic(parent / TRIAL_METRICS_FILE, summary)
    return SeedsOutcome(parent=parent, summary=summary)


def _fit_seeds(
    spec: ExperimentSpec, seeds: Sequence[int], parent: Path, parent_key: str
) -> dict[str, Any]:
    # With the legacy reporter, verbose=0 prints nothing: the trials' own log lines show progress.
    os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
    trainable = tune.with_parameters(
        seed_trainable, spec_data=spec.dump(), parent=str(parent), parent_key=parent_key
    )
    tuner = tune.Tuner(
        tune.with_resources(trainable, tune.PlacementGroupFactory(seed_bundles(spec))),
        param_space={SEED_KEY: tune.grid_search(list(seeds))},
        tune_config=tune.TuneConfig(trial_dirname_creator=_trial_dirname),
        run_config=tune.RunConfig(name=TUNE_DIR, storage_path=str(parent), verbose=0),
    )
    logger.info("seeds {} of {}: {}", list(seeds), spec.name, parent)
    finals: dict[int, dict[str, float]] = {}
    failed: dict[int, str] = {}
    for result in tuner.fit():
        seed = int(result.config[SEED_KEY])
        reason = _failure(result)
        if reason is None:
            finals[seed] = result.metrics[FINAL_KEY]
        else:
            failed[seed] = reason
    return seeds_summary(finals, failed=failed)
