"""`rlp train` and `rl_platform.train`: a run folder around the shared `TrainingLoop`
(`rl_platform.run.loop`) and a stock RLlib Algorithm."""

import contextlib
import dataclasses
import json
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from rl_platform.base.devices import require_acting_device
from rl_platform.base.errors import TrainingHealthError, UserError
from rl_platform.envs.user_envs import preflight_env
from rl_platform.ray_runtime.session import ensure_ray, ray_logs_to
from rl_platform.rllib.config import ConfigExtension
from rl_platform.rllib.facts import RunFacts, run_facts
from rl_platform.run.algorithm_build import build_algorithm
from rl_platform.run.env_runner_fit import (
    check_env_runners_fit,
    resource_wait_s,
    waiting_for_resources_noticed,
)
from rl_platform.run.env_runner_health import runner_return_s
from rl_platform.run.health import HealthStatus
from rl_platform.run.loop import (
    IterationHook,
    LoopOutcome,
    LoopStart,
    TrainingLoop,
    resume_from,
)
from rl_platform.run.resume import (
    check_checkpoint_fits,
    checkpoint_to_resume,
    record_resumed_spec,
    resume_target,
    stop_reached_at,
)
from rl_platform.run.run_folder_reporter import RunFolderReporter, RunResult, restore_rows
from rl_platform.run.signals import StopRequest
from rl_platform.run.spec_sizes import check_spec_fits_machine
from rl_platform.spec import ExperimentSpec, validate_spec_data
from rl_platform.storage.checkpoints import CheckpointStore, LoadedCheckpoint
from rl_platform.storage.layout import (
    CHECKPOINTS_DIR,
    LOG_FILE,
    RUNS_DIR,
    TRIAL_METRICS_FILE,
)
from rl_platform.storage.ray_working_dir import in_ray_working_dir, temporary_run_line
from rl_platform.storage.run_dir import add_file_log, new_run_dir, removed_if_nothing_written
from rl_platform.storage.run_lock import RunLock
from rl_platform.storage.run_upload import RunUploader, run_key_of, run_uploader, storage_out
from rl_platform.storage.saved_spec import write_saved_spec
from rl_platform.utils.cluster_address import check_cluster_answers
from rl_platform.utils.cuda_graphs import is_out_of_memory
from rl_platform.utils.names import require_utf8_start
from rl_platform.utils.network_timeout import network_timeout_s
from rl_platform.utils.secrets import secret_values
from rl_platform.utils.stop_grace import stop_grace_s


def train(
    spec: ExperimentSpec,
    *,
    out_dir: str | Path = RUNS_DIR,
    resume: str | Path | None = None,
    extensions: Sequence[ConfigExtension] = (),
    force: bool = False,
    dashboard: bool = False,
    on_iteration: IterationHook | None = None,
) -> RunResult:
    """Train `spec` until a stop condition; checkpoints, metrics and logs go to the run folder.
    `out_dir` is the parent of run folders, or a storage URI string (`s3://bucket/runs`: the
    spec's `logging.storage`, run folders under `runs/`). `resume` is a run folder or one of
    its checkpoint folders. `extensions` run after the run's own
    (`rl_platform.run.algorithm_build`), e.g. a test's. `force` resumes from a checkpoint
    flagged as collapsed. `dashboard` starts the local Ray with its dashboard. `on_iteration`
    watches every iteration and may stop the run (`rl_platform.run.loop.IterationHook`; the
    benchmarks measure through it).

    `spec` is validated again, as a file is: a spec changed after loading
    (`spec.model_copy(update=...)` skips pydantic's validators) raises the `SpecError` its file
    would. Calls from several threads of one process run one after another (one process holds
    one Ray, and a second local Ray in it fails or hangs): a call waits for the one before it
    (docs/training.md, "The Python API")."""
    spec = validate_spec_data(spec.dump(), source="rl_platform.train(spec)")
    with _ONE_RUN.held():
        return _train(
            spec,
            out_dir=out_dir,
            resume=resume,
            extensions=extensions,
            force=force,
            dashboard=dashboard,
            on_iteration=on_iteration,
        )


class _OneRunAtATime:
    """The process's one training at a time. A second thread waits for the first; a call from
    inside a run on the same thread (an `on_iteration` hook) would wait for itself, so it is
    refused instead."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owner: int | None = None

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if self._owner == threading.get_ident():
            raise UserError(
                "rl_platform.train was called from inside a run of the same thread (an "
                "on_iteration hook?); start the next run after this one returns"
            )
        if not self._lock.acquire(blocking=False):
            logger.info("another rl_platform.train runs in this process; waiting for it to end")
            self._lock.acquire()
        self._owner = threading.get_ident()
        try:
            yield
        finally:
            self._owner = None
            self._lock.release()


_ONE_RUN = _OneRunAtATime()


def _train(
    spec: ExperimentSpec,
    *,
    out_dir: str | Path,
    resume: str | Path | None,
    extensions: Sequence[ConfigExtension],
    force: bool,
    dashboard: bool,
    on_iteration: IterationHook | None,
) -> RunResult:
    spec, out_dir = storage_out(spec, out_dir)
    if resume:  # Ray cannot start on, nor a run write to, a path that is not UTF-8
        require_utf8_start(resume, what="--resume")
    else:
        require_utf8_start(out_dir)
    facts = _check_before_any_file(spec)
    grace_s = stop_grace_s(os.environ)  # how long a stop may take: a bad value before any file
    target = resume_target(resume) if resume else None
    run_dir = target.run_dir if target else new_run_dir(out_dir, spec.name)
    run_key = run_key_of(run_dir, out_dir=None if target else out_dir)
    # A new folder whose start fails (a full disk at `.lock`) is not left behind holding nothing.
    new_folder = contextlib.nullcontext() if target else removed_if_nothing_written(run_dir)
    with new_folder, RunLock(run_dir):
        # Verified before anything is written: a bad resume leaves the run as it was.
        checkpoint = checkpoint_to_resume(target, force=force) if target else None
        if target:
            check_checkpoint_fits(target.run_dir, spec, facts=facts)
        if checkpoint is not None:
            reached = stop_reached_at(checkpoint, spec.stop)
            if reached is not None:  # where an uninterrupted run ended: nothing to train
                return _already_at_stop(run_dir, spec, checkpoint, reached)
        with _file_log(run_dir, spec):
            if spec.logging.storage is None and in_ray_working_dir(run_dir):
                logger.warning(temporary_run_line(run_dir))  # a job's run Ray will delete
            if checkpoint is None:
                write_saved_spec(run_dir, spec)
            ensure_ray(dashboard=dashboard)
            stop_request = StopRequest(  # after ray.init, which replaces SIGTERM's handler
                grace_s=grace_s,
                last_checkpoint=CheckpointStore(run_dir / CHECKPOINTS_DIR).latest,
            ).install()
            try:
                with _uploaded(spec, run_dir, run_key) as uploader:
                    result = _train_in(
                        run_dir,
                        spec,
                        stop_request.reason,
                        checkpoint,
                        extensions,
                        uploader,
                        facts=facts,
                        on_iteration=on_iteration,
                    )
                return _where_stored(result, uploader)
            finally:
                stop_request.restore()


def _already_at_stop(
    run_dir: Path, spec: ExperimentSpec, checkpoint: LoadedCheckpoint, reached: str
) -> RunResult:
    """A resume of a run whose checkpoint already met `stop`: no Ray, no log file, no new
    spec; only the checkpoint's own rows put back if a kill between the checkpoint and its
    rows lost them, so the files are those of the uninterrupted run."""
    store = CheckpointStore(run_dir / CHECKPOINTS_DIR, keep_last=spec.checkpoint.keep_last)
    restore_rows(run_dir, store, checkpoint)
    summary = run_dir / TRIAL_METRICS_FILE
    return RunResult(
        run_dir=run_dir,
        iterations=int(checkpoint.meta["iteration"]),
        env_steps=int(checkpoint.meta.get("env_steps") or 0),
        trial_metrics=json.loads(summary.read_text()) if summary.is_file() else {},
        stop_reason=reached,
        last_checkpoint=checkpoint.path,
        already_at_stop=True,
    )


def _check_before_any_file(spec: ExperimentSpec) -> RunFacts:
    """What can refuse a run before a folder is written or Ray starts: the acting device, a
    user's env that breaks at once (seconds, not a crashed env runner), and sizes the machine
    cannot hold (not a kill by the kernel minutes later). Returns the run's facts, resolved
    here once for `rlp train` and handed down."""
    require_acting_device(
        spec.resources.acting_device,
        profiles_setting_it=[
            name
            for name, profile in spec.profiles.items()
            if profile.resources.get("acting_device") == "cuda"
        ],
    )
    preflight_env(spec.env.id, spec.env.kwargs, seed=spec.seed)
    for bound in (network_timeout_s, runner_return_s, resource_wait_s):
        bound()  # a bad RLP_*_S setting: one line before any file, not a failure mid-run
    check_cluster_answers()  # RAY_ADDRESS at a closed port: one line, not minutes of retries
    check_env_runners_fit(spec)  # more env runners than the local Ray's CPUs: never started
    facts = run_facts(spec)  # `rlp train`'s entry: every consumer after this is handed it
    check_spec_fits_machine(spec, facts)
    return facts


def train_in_folder(spec: ExperimentSpec, run_dir: Path, *, run_key: str) -> RunResult:
    """A new run of `spec` in the existing empty folder `run_dir`, on the Ray this process
    already joined: one seed of `rlp train --seeds` inside its Tune trial. No signal handler
    (the trial trains in a thread, where Python allows none); Tune ends the trial. `run_key`:
    where `logging.storage` keeps it (`seeds/NAME/STAMP/seed_N`)."""
    with RunLock(run_dir), _file_log(run_dir, spec):
        write_saved_spec(run_dir, spec)
        with _uploaded(spec, run_dir, run_key) as uploader:
            # A seed's entry: it trains in its own Tune worker process.
            facts = run_facts(spec)
            result = _train_in(run_dir, spec, lambda: None, None, (), uploader, facts=facts)
        return _where_stored(result, uploader)


def _where_stored(result: "RunResult", uploader: RunUploader | None) -> "RunResult":
    """The result with the truth about storage, known once the final upload has run."""
    if uploader is None:
        return result
    if uploader.stored:
        return dataclasses.replace(result, stored_at=uploader.uri)
    return dataclasses.replace(result, not_stored_at=uploader.uri)


@contextlib.contextmanager
def _uploaded(spec: ExperimentSpec, run_dir: Path, run_key: str) -> Iterator[RunUploader | None]:
    """The run's uploader (`logging.storage`; None without): the spec at the start, the whole
    folder at the end, also when training failed or was stopped."""
    uploader = run_uploader(spec, run_dir, run_key=run_key)
    if uploader is None:
        yield None
        return
    logger.info("storing the run at {}", uploader.uri)
    uploader.at_start()
    try:
        yield uploader
    finally:
        uploader.at_end()


@contextlib.contextmanager
def _file_log(run_dir: Path, spec: ExperimentSpec) -> Iterator[None]:
    """Our log and Ray's notices both go to the run's train.log (`ray_logs_to`); the spec's
    secret values are masked in our messages, on the console too."""
    handle = add_file_log(run_dir, secrets=secret_values(spec.dump()))
    try:
        with ray_logs_to(run_dir / LOG_FILE):
            yield
    finally:
        logger.remove(handle)


def _restore(algo: Any, checkpoint: LoadedCheckpoint) -> LoopStart:
    try:
        return resume_from(algo, checkpoint)
    except (RuntimeError, ValueError, KeyError) as exc:  # torch's load_state_dict, RLlib's
        detail = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        raise UserError(
            f"--resume: the spec does not fit checkpoint {checkpoint.path.name} ({detail}); "
            "resume with the run's own spec.yaml, or start a new run for a changed model"
        ) from None


def _train_in(
    run_dir: Path,
    spec: ExperimentSpec,
    host_stop: Callable[[], str | None],
    checkpoint: LoadedCheckpoint | None,
    extensions: Sequence[ConfigExtension],
    uploader: RunUploader | None,
    *,
    facts: RunFacts,
    on_iteration: IterationHook | None = None,
) -> RunResult:
    store = CheckpointStore(run_dir / CHECKPOINTS_DIR, keep_last=spec.checkpoint.keep_last)
    with waiting_for_resources_noticed(spec):  # a cluster short of them: said every 30 s
        algo = build_algorithm(spec, facts=facts, run_dir=run_dir, extra=extensions)
    try:
        start = LoopStart()
        if checkpoint is not None:
            start = _restore(algo, checkpoint)
            record_resumed_spec(run_dir, spec, checkpoint.path)
        reporter = RunFolderReporter(
            run_dir, spec, store, start, uploader=uploader, resumed=checkpoint
        )
        try:
            with out_of_memory_names_the_settings(spec, store):
                outcome = _loop(spec, facts, algo, reporter, start, host_stop, on_iteration)
        except TrainingHealthError as exc:  # a lost env runner, weights gone non-finite
            raise TrainingHealthError(
                f"{exc}. Last good checkpoint: {store.latest() or 'none'}"
            ) from None
        finally:
            reporter.close()
        if outcome.verdict.status is HealthStatus.NAN:
            raise TrainingHealthError(
                f"iteration {outcome.iteration}: {outcome.verdict.reason}; the update was not "
                f"applied and training stopped. Last good checkpoint: {store.latest() or 'none'}. "
                "Try a lower training.lr, a grad_clip, or check the env's rewards."
            )
        return reporter.finish(outcome)
    finally:
        algo.stop()


def _loop(
    spec: ExperimentSpec,
    facts: RunFacts,
    algo: Any,
    reporter: "RunFolderReporter",
    start: LoopStart,
    host_stop: Callable[[], str | None],
    on_iteration: IterationHook | None,
) -> LoopOutcome:
    return TrainingLoop(
        spec,
        algo,
        facts=facts,
        reporter=reporter,
        start=start,
        stop_on_collapse=spec.health.on_collapse == "stop",
        checkpoint_at_stop=spec.checkpoint.at_end,
        host_stop=host_stop,
        save_collapsed=False,  # a collapse stop keeps the last healthy `latest`
        evaluate=True,
        on_iteration=on_iteration,
    ).run()


@contextlib.contextmanager
def out_of_memory_names_the_settings(spec: ExperimentSpec, store: CheckpointStore) -> Iterator:
    """A GPU out of memory becomes one line naming what to lower (exit 2); every checkpoint
    written so far stays (each is complete on disk before the next iteration starts)."""
    try:
        yield
    except Exception as exc:
        if not is_out_of_memory(exc):
            raise
        first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else "out of memory"
        batch = "minibatch_size" if hasattr(spec.training, "minibatch_size") else "train_batch_size"
        raise UserError(
            f"GPU out of memory ({first}); lower env.envs_per_runner (games acting at once, "
            f"now {spec.env.envs_per_runner}) or training.{batch} (now "
            f"{getattr(spec.training, batch)}); the last checkpoint is kept: "
            f"{store.latest() or 'none yet'} (resume with --resume)"
        ) from None
