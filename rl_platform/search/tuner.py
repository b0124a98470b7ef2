"""Run or resume a search with Ray Tune: ASHA, synchronous halving or FIFO over the spec's
`search.params`.

Metric and mode are given to `TuneConfig` only; Tune hands them to the scheduler and the
searcher (Ray raises when both a scheduler and the TuneConfig name them).
"""

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.fs
from loguru import logger
from ray import tune
from ray.tune.result import EXPR_PROGRESS_FILE, EXPR_RESULT_FILE
from ray.tune.schedulers import ASHAScheduler, FIFOScheduler
from ray.tune.search import ConcurrencyLimiter
from ray.tune.search.basic_variant import BasicVariantGenerator

from rl_platform.base.errors import UserError
from rl_platform.ray_runtime.session import ensure_ray, ray_logs_to
from rl_platform.search.budget import TrialBudget, trial_budget, trial_bundles
from rl_platform.search.folder import (
    BEST_FILE,
    LOG_FILE,
    new_search_dir,
    saved_spec,
    trial_folder,
)
from rl_platform.search.halving import rung_marks, rungs
from rl_platform.search.halving_scheduler import HalvingScheduler
from rl_platform.search.results import FINISHED, TrialRow, trial_row, write_outputs
from rl_platform.search.seal import seal, tune_state_files, unseal
from rl_platform.search.space import to_tune_space
from rl_platform.search.trainable import search_trainable
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.search import SearchSpec
from rl_platform.storage.run_dir import refuse_links
from rl_platform.storage.run_lock import RunLock
from rl_platform.utils.console_log import OFF_CONSOLE
from rl_platform.utils.names import require_utf8_start

Observer = Callable[[list[TrialRow]], None]
# Tune pickles the run config (callbacks included) into tuner.pkl and a resumed search runs the
# unpickled copy, so the callback carries no process-local objects: it calls the observers
# registered in this process here.
_OBSERVERS: list[Observer] = []
TUNER_STATE_FILE = "tuner.pkl"  # Tune's pickled Tuner (ray/tune/impl/tuner_internal.py)


@dataclass(frozen=True)
class SearchOutcome:
    search_dir: Path
    rows: list[TrialRow]
    best: TrialRow | None
    interrupted: bool
    """Some trials have not finished (Ctrl+C); `rlp search --resume` continues them."""

    @property
    def best_yaml(self) -> Path | None:
        return self.search_dir / BEST_FILE if self.best is not None else None


def _rows(trials: list[Any], spec: ExperimentSpec, budget: TrialBudget) -> list[TrialRow]:
    search = spec.search
    assert search is not None
    rows = [
        trial_row(
            trial_id=trial.trial_id,
            tune_status=trial.status,
            config=trial.config,
            result=trial.last_result or {},
            param_paths=list(search.params),
            metric=search.scheduler.metric,
            budget=budget,
        )
        for trial in trials
    ]
    return sorted(rows, key=lambda row: row.trial_id)


class _LiveRows(tune.Callback):
    """Sends the rows of all trials to this process's observers, at most twice a second."""

    def __init__(self, *, spec: ExperimentSpec, budget: TrialBudget) -> None:
        self.spec, self.budget = spec, budget
        self._last_sent = 0.0

    def _send(self, trials: list[Any]) -> None:
        rows = _rows(trials, self.spec, self.budget)
        for observer in list(_OBSERVERS):
            try:
                observer(rows)
            except Exception:  # a broken display must not end the search
                logger.exception("search observer failed")

    def on_step_end(self, iteration: int, trials: list[Any], **info: Any) -> None:
        if _OBSERVERS and time.monotonic() - self._last_sent >= 0.5:
            self._last_sent = time.monotonic()
            self._send(trials)

    def on_experiment_end(self, trials: list[Any], **info: Any) -> None:
        self._send(trials)


class _SealState(tune.Callback):
    """Seals Tune's experiment state each time Tune saves it (see `rl_platform.search.seal`):
    from the driver's staging folder, where `save_to_dir` has just written it, so a driver
    killed before Tune's upload still leaves a sealed state to resume from."""

    def __init__(self) -> None:
        self._fingerprint: tuple = ()

    def on_step_end(self, iteration: int, trials: list[Any], **info: Any) -> None:
        if not trials:
            return
        storage = trials[0].storage
        staging = Path(storage.experiment_driver_staging_path)
        if not staging.is_dir():
            return
        files = tune_state_files(staging)
        fingerprint = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
        if fingerprint != self._fingerprint:
            seal(Path(storage.experiment_fs_path), files)
            self._fingerprint = fingerprint


class _KeepTrialLogs(tune.Callback):
    """Uploads a failed trial's result.json and progress.csv before Tune restarts it.

    Tune's loggers write these in the driver's staging folder and upload them every few
    seconds; a restarted trial's loggers first download them again (`_restore_from_remote` in
    ray/tune/logger/logger.py). A trial that fails before the next upload would get back a
    stale copy and lose the rows it had reported, so they go up before the retry."""

    LOG_FILES = (EXPR_RESULT_FILE, EXPR_PROGRESS_FILE)

    def on_trial_recover(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        storage = trial.storage
        for name in self.LOG_FILES:
            local = Path(trial.local_path, name)
            if local.is_file():
                pyarrow.fs.copy_files(
                    str(local),
                    f"{storage.trial_fs_path}/{name}",
                    destination_filesystem=storage.storage_filesystem,
                )


@contextlib.contextmanager
def _observing(observer: Observer | None) -> Iterator[None]:
    if observer is not None:
        _OBSERVERS.append(observer)
    try:
        yield
    finally:
        if observer is not None:
            _OBSERVERS.remove(observer)


def _require_optuna() -> type:
    try:
        import optuna  # noqa: F401
    except ImportError:
        raise UserError(
            "search.searcher optuna needs the optional dependency: run `uv sync --extra optuna` "
            "(or `pip install 'rl_platform[optuna]'`), or use `searcher: random`"
        ) from None
    from ray.tune.search.optuna import OptunaSearch

    return OptunaSearch


def _searcher(search: SearchSpec, points: list[dict[str, Any]] | None) -> Any:
    """The search algorithm, limited to `search.max_concurrent` running trials.

    The limit is set on the searcher itself: Tune's `max_concurrent_trials` only wraps a
    `Searcher` (optuna) and is ignored, with a warning, for the random `BasicVariantGenerator`.
    """
    if search.searcher.type == "optuna":
        optuna_search = _require_optuna()(seed=search.searcher.seed, points_to_evaluate=points)
        if search.max_concurrent is None:
            return optuna_search
        return ConcurrencyLimiter(optuna_search, max_concurrent=search.max_concurrent)
    return BasicVariantGenerator(
        points_to_evaluate=points,
        random_state=search.searcher.seed,
        max_concurrent=search.max_concurrent or 0,
    )


def _scheduler(search: SearchSpec, budget: TrialBudget) -> Any:
    if search.scheduler.type == "fifo":
        return FIFOScheduler()
    if search.scheduler.type == "halving":
        return HalvingScheduler(
            time_attr=budget.time_attr,
            rungs=rungs(budget),
            reduction_factor=budget.reduction_factor,
        )
    return ASHAScheduler(
        time_attr=budget.time_attr,
        max_t=budget.max_t,
        grace_period=budget.grace_period,
        reduction_factor=budget.reduction_factor,
    )


def _trainable(spec: ExperimentSpec, search_dir: Path, budget: TrialBudget) -> Any:
    assert spec.search is not None
    halving = spec.search.scheduler.type == "halving"
    trainable = tune.with_parameters(
        search_trainable,
        base_spec=spec.dump(),
        metric=spec.search.scheduler.metric,
        search_dir=str(search_dir),
        # a paused trial resumes from the checkpoint it reported at its rung
        checkpoint_marks=rung_marks(budget) if halving else None,
    )
    return tune.with_resources(trainable, tune.PlacementGroupFactory(trial_bundles(spec)))


def trial_dirname(trial: Any) -> str:
    return trial_folder("", trial.trial_id).name


def _fit(
    tuner: Any,
    search_dir: Path,
    spec: ExperimentSpec,
    budget: TrialBudget,
    observer: Observer | None,
) -> SearchOutcome:
    search = spec.search
    assert search is not None
    log_handle = logger.add(search_dir / LOG_FILE, level="INFO")
    logger.info(
        "search {}: {} x {} on {} (max_t {}, grace {}), searcher {}",
        search_dir,
        search.num_samples,
        search.scheduler.type,
        budget.time_attr,
        budget.max_t,
        budget.grace_period,
        search.searcher.type,
    )
    logger.info("TensorBoard of the trials: tensorboard --logdir {}", search_dir)
    try:
        with _observing(observer):
            tuner.fit()
        seal(search_dir, tune_state_files(search_dir))  # Tune's final save, now complete
        rows = _rows(tune.ExperimentAnalysis(str(search_dir)).trials, spec, budget)
        best = write_outputs(
            search_dir,
            base=spec.dump(),
            rows=rows,
            param_paths=list(search.params),
            metric=search.scheduler.metric,
            mode=search.scheduler.mode,
        )
        interrupted = any(row.status not in FINISHED for row in rows)
        # For search.log: the console's summary (`rlp search`) names the best trial itself.
        logger.bind(**{OFF_CONSOLE: True}).info(
            "search ended: {} trials, {}",
            len(rows),
            f"best {best.headline()}" if best else "no best trial",
        )
    finally:
        logger.remove(log_handle)
    return SearchOutcome(search_dir=search_dir, rows=rows, best=best, interrupted=interrupted)


def run_search(
    spec: ExperimentSpec,
    *,
    out_dir: str | Path = "runs",
    points: list[dict[str, Any]] | None = None,
    observer: Observer | None = None,
    num_cpus: int | None = None,
    dashboard: bool = False,
) -> SearchOutcome:
    """Search `spec.search` over `spec`; `points` pins the first configurations to try.
    `dashboard` starts the local Ray with its dashboard."""
    budget = trial_budget(spec)  # spec problems surface before Ray starts
    search = spec.search
    assert search is not None
    if search.searcher.type == "optuna":
        _require_optuna()
    require_utf8_start(out_dir)
    search_dir = new_search_dir(out_dir, spec)
    # Held while it runs: a `rlp search --resume` of this folder meanwhile is refused.
    # Ray's notices go to search.log: on the console they would tear the live table.
    with RunLock(search_dir), ray_logs_to(search_dir / LOG_FILE):
        ensure_ray(num_cpus, log_to_driver=False, dashboard=dashboard)
        tuner = _new_tuner(spec, search_dir, budget, points)
        seal(search_dir, [search_dir / TUNER_STATE_FILE])  # written by the Tuner just now
        return _fit(tuner, search_dir, spec, budget, observer)


def _new_tuner(
    spec: ExperimentSpec,
    search_dir: Path,
    budget: TrialBudget,
    points: list[dict[str, Any]] | None,
) -> Any:
    search = spec.search
    assert search is not None
    return tune.Tuner(
        _trainable(spec, search_dir, budget),
        param_space=to_tune_space(search.params),
        tune_config=tune.TuneConfig(
            metric=search.scheduler.metric,
            mode=search.scheduler.mode,
            scheduler=_scheduler(search, budget),
            search_alg=_searcher(search, points),
            num_samples=search.num_samples,
            trial_dirname_creator=trial_dirname,
            # A trial's process imports torch and RLlib; reusing it saves that per trial. The
            # stopped trial's thread exits through `algo.stop()` before the next one starts.
            reuse_actors=True,
        ),
        run_config=tune.RunConfig(
            name=search_dir.name,
            storage_path=str(search_dir.parent),
            stop={budget.time_attr: budget.max_t},
            failure_config=tune.FailureConfig(max_failures=1),
            checkpoint_config=tune.CheckpointConfig(num_to_keep=spec.checkpoint.keep_last),
            callbacks=[_LiveRows(spec=spec, budget=budget), _SealState(), _KeepTrialLogs()],
            verbose=0,
        ),
    )


def resume_search(
    search_dir: str | Path,
    *,
    observer: Observer | None = None,
    num_cpus: int | None = None,
    dashboard: bool = False,
) -> SearchOutcome:
    """Continue an interrupted search: finished trials stay, the others resume from their
    latest checkpoint (errored ones too), unstarted ones start."""
    require_utf8_start(search_dir, what="--resume")
    folder = Path(search_dir).resolve()
    spec = saved_spec(folder)
    budget = trial_budget(spec, source=str(folder))
    # One writer per search folder, as per run folder: a second resume would move the first
    # one's files aside (`unseal`) and run its trials twice. Refused naming the holder.
    with RunLock(folder):
        return _resume_locked(folder, spec, budget, observer, num_cpus, dashboard)


def _resume_locked(
    folder: Path,
    spec: ExperimentSpec,
    budget: TrialBudget,
    observer: Observer | None,
    num_cpus: int | None,
    dashboard: bool,
) -> SearchOutcome:
    # A link out of the folder would let the set-aside of unsealed files, and Tune's writes,
    # reach someone else's files: refused, as `rlp train --resume` refuses one.
    refuse_links(folder)
    unseal(folder)  # before Tune reads (and unpickles) anything in the folder
    if not tune.Tuner.can_restore(str(folder)):
        raise UserError(f"--resume {folder}: Tune has no experiment state there to resume")
    with ray_logs_to(folder / LOG_FILE):
        ensure_ray(num_cpus, log_to_driver=False, dashboard=dashboard)
        trainable = _trainable(spec, folder, budget)
        tuner = tune.Tuner.restore(str(folder), trainable=trainable, resume_errored=True)
        seal(folder, [folder / TUNER_STATE_FILE])
        return _fit(tuner, folder, spec, budget, observer)
