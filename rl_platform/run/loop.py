"""One training run's iteration loop, shared by `rlp train` and every search trial.

Each iteration: `algo.train()`, namespaced metrics, the health verdict, the env-runner check,
the stop conditions (the spec's `stop`, the host's own, an unhealthy verdict), a checkpoint
when due or at the stop (saved by the host first), then one report to the host with where the
iteration's time went (`perf/sample_s`, `perf/learn_s`, ...: rl_platform/run/phase_clock.py).
What differs between hosts is only where
reports and checkpoints go (`LoopReporter`: a run folder, or Tune) and two policies: whether
entropy collapse stops the run and whether the run checkpoints when it stops. A host may add
`CheckpointMarks` (a halving search's rungs), where the run checkpoints as well. A caller of
`rl_platform.train` (a benchmark) may watch each iteration through an `IterationHook`; its time
counts in the iteration's `perf/other_s`.
"""

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from loguru import logger

from rl_platform.base.errors import TrainingHealthError, user_error_in
from rl_platform.base.lifetime_steps import lifetime_env_steps, logged_lifetime_env_steps
from rl_platform.envs.env_info import action_names_of
from rl_platform.envs.user_envs import env_error_in
from rl_platform.policies.observation_filter import observation_filter_in
from rl_platform.ray_runtime.rllib_internals import (
    PHASE_CLOCK,
    around_learner_updates,
    around_weight_syncs,
    set_iteration,
)
from rl_platform.rllib.algorithm_state import (
    ALGORITHM_PART,
    module_weights,
    restore_algorithm,
    snapshot_algorithm,
)
from rl_platform.rllib.facts import RunFacts
from rl_platform.run.env_runner_health import (
    ASYNC_SAMPLING,
    LostRunnerWait,
    check_env_runners,
    has_remote_env_runners,
    runner_return_s,
)
from rl_platform.run.gpu_monitor import GpuMonitor
from rl_platform.run.health import (
    HEALTH_META_KEY,
    HealthMonitor,
    HealthStatus,
    HealthVerdict,
    max_entropy,
)
from rl_platform.run.metrics import extract_metrics
from rl_platform.run.periodic_eval import PeriodicEvaluation
from rl_platform.run.phase_clock import CHECKPOINT, EVAL, LEARN, TRAIN, WEIGHTS_SYNC, PhaseClock
from rl_platform.run.sinks import METRICS_ROW_META_KEY
from rl_platform.run.stopping import CheckpointMarks, StopTracker
from rl_platform.spec import ExperimentSpec
from rl_platform.storage.checkpoints import LoadedCheckpoint
from rl_platform.utils.oom_kills import oom_kill_count
from rl_platform.utils.patched_call import patch_call


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint taken but not yet written: the host decides where it goes."""

    iteration: int
    parts: dict[str, Any]
    meta: dict[str, Any]
    evaluation: dict[str, float] | None = None
    """`eval/...` metrics of this checkpoint's policy, when the loop evaluated it."""
    best_metric: str | None = None
    """The `eval/...` key whose highest value marks the run's `best` checkpoint."""


IterationHook = Callable[[Any, dict[str, float]], str | None]
"""Called once per iteration with the Algorithm and a copy of the iteration's metrics row
(`eval/...` included when the loop evaluated), before the stop conditions are checked; a
non-empty string stops the run with that reason (checkpointed like any other stop)."""


class LoopReporter(Protocol):
    def save(self, checkpoint: Checkpoint) -> None:
        """Write the checkpoint durably, before the metrics row that mentions it."""

    def report(
        self,
        metrics: dict[str, float],
        *,
        verdict: HealthVerdict,
        stop_reason: str,
        checkpoint: Checkpoint | None,
    ) -> None: ...


@dataclass(frozen=True)
class LoopStart:
    iteration: int = 0
    env_steps: int = 0


@dataclass(frozen=True)
class LoopOutcome:
    iteration: int
    env_steps: int
    stop_reason: str
    verdict: HealthVerdict


def _driver_callbacks(algo: Any) -> list[Any]:
    return algo.callbacks if isinstance(algo.callbacks, list) else [algo.callbacks]


def checkpoint_participants(algo: Any) -> list[Any]:
    """Driver callbacks whose state lives outside RLlib's (the league, the off-policy path's
    replay): saved as extra parts."""
    return [cb for cb in _driver_callbacks(algo) if hasattr(cb, "checkpoint_parts")]


def resume_from(algo: Any, checkpoint: LoadedCheckpoint) -> LoopStart:
    """Restore the algorithm and the participants' state; where the loop picks up."""
    iteration = restore_algorithm(algo, checkpoint)
    for participant in checkpoint_participants(algo):
        participant.restore_parts(checkpoint.parts, algorithm=algo)
    env_steps = checkpoint.meta.get("env_steps")
    if env_steps is None:
        env_steps = logged_lifetime_env_steps(algo.metrics)
    logger.info("resumed from {} at iteration {}", checkpoint.path.name, iteration)
    return LoopStart(iteration=iteration, env_steps=int(env_steps))


class TrainingLoop:
    """See the module docstring."""

    def __init__(
        self,
        spec: ExperimentSpec,
        algo: Any,
        *,
        facts: RunFacts,
        reporter: LoopReporter,
        start: LoopStart = LoopStart(),
        stop_on_collapse: bool,
        checkpoint_at_stop: bool,
        host_stop: Callable[[], str | None] = lambda: None,
        save_collapsed: bool = True,
        evaluate: bool = False,
        on_iteration: IterationHook | None = None,
        checkpoint_marks: CheckpointMarks | None = None,
    ) -> None:
        self.spec, self.algo, self.reporter = spec, algo, reporter
        self.on_iteration = on_iteration
        self.iteration, self.env_steps = start.iteration, start.env_steps
        self.stop_on_collapse, self.checkpoint_at_stop = stop_on_collapse, checkpoint_at_stop
        self.host_stop = host_stop
        self.save_collapsed = save_collapsed
        self.stopper = StopTracker(
            spec.stop,
            spec.checkpoint,
            env_steps=start.env_steps,
            iteration=start.iteration,
            marks=checkpoint_marks,
        )
        self._previous_env_steps = float(start.env_steps)
        self.clock = PhaseClock()
        self.action_names = action_names_of(spec.env.id)
        self.health = HealthMonitor(
            spec.health, max_entropy=max_entropy(facts.trained_action_space)
        )
        self.evaluation = (
            PeriodicEvaluation(spec, facts=facts, start_env_steps=start.env_steps)
            if evaluate and spec.evaluation is not None
            else None
        )
        self.lost_runners = (
            LostRunnerWait(
                algo,
                return_s=runner_return_s(),
                oom_kills_before=oom_kill_count(),
                synchronous=spec.algo not in ASYNC_SAMPLING,
            )
            if has_remote_env_runners(algo)
            else None
        )

    def run(self) -> LoopOutcome:
        self.clock = PhaseClock()  # the first iteration starts now
        instrument(self.algo, self.clock)
        gpu = GpuMonitor.for_this_process()
        while True:
            with self.clock.phase(TRAIN):
                result = self._train_once()
            metrics = extract_metrics(
                result, previous_env_steps=self.env_steps, action_names=self.action_names
            )
            self.iteration, self.env_steps = int(metrics["iteration"]), int(metrics["env_steps"])
            verdict = self._health_verdict(metrics)
            if verdict.status is not HealthStatus.NAN:
                check_env_runners(self.algo, iteration=self.iteration)
            checkpoint = None
            if self._evaluation_due(verdict):  # every evaluated policy is a checkpoint
                checkpoint, verdict = self._try_checkpoint(verdict)
                if checkpoint is not None:
                    with self.clock.phase(EVAL):
                        checkpoint = self._evaluate(checkpoint)
                    metrics |= checkpoint.evaluation or {}
            reason = self._stop_reason(metrics, verdict, self._watch(metrics))
            if checkpoint is None and self._checkpoint_due(reason, verdict):
                checkpoint, verdict = self._try_checkpoint(verdict)
                reason = verdict.reason if verdict.status is HealthStatus.NAN else reason
            if checkpoint is not None:
                # The row travels in the checkpoint: a resume restores it if the file lost it.
                meta = {**checkpoint.meta, METRICS_ROW_META_KEY: dict(metrics)}
                checkpoint = dataclasses.replace(checkpoint, meta=meta)
                with self.clock.phase(CHECKPOINT):
                    self.reporter.save(checkpoint)
            metrics |= self._perf(metrics, gpu)
            self.reporter.report(
                metrics, verdict=verdict, stop_reason=reason, checkpoint=checkpoint
            )
            if checkpoint is not None:
                self.stopper.mark_checkpoint(self.iteration, self.env_steps)
            if reason:
                return LoopOutcome(self.iteration, self.env_steps, reason, verdict)

    def _train_once(self) -> dict:
        """One iteration that sampled: an iteration that sampled nothing because a remote env
        runner was lost does not count (RLlib's counter goes back) and is trained again once
        the runner is back (`env_runner_health.LostRunnerWait`)."""
        while True:
            result = self._train_call()
            if lifetime_env_steps(result) > self.env_steps or self.lost_runners is None:
                if self.lost_runners is not None:
                    self.lost_runners.sampled()
                return result
            if not self.lost_runners.sampled_nothing(iteration=self.iteration + 1):
                return result
            # Trainable's counter: this iteration did not happen.
            set_iteration(self.algo, self.algo.iteration - 1)

    def _train_call(self) -> dict:
        try:
            return self.algo.train()
        except Exception as exc:
            # RLlib re-raises an env's error as a bare RuntimeError: the user's error, or one
            # raised inside the user's env module, is reported as theirs (exit 2).
            cause = user_error_in(exc) or env_error_in(exc, self.spec.env.id)
            if cause is None:
                raise
            raise cause from None

    def _perf(self, metrics: dict[str, float], gpu: GpuMonitor | None) -> dict[str, float]:
        """The iteration's time split; env steps/s over the whole iteration; GPU figures."""
        split = self.clock.split()
        steps = metrics["env_steps"] - self._previous_env_steps
        self._previous_env_steps = metrics["env_steps"]
        iteration_s = split["perf/iteration_s"]
        split["perf/env_steps_per_s"] = steps / iteration_s if iteration_s > 0 else 0.0
        return split | (gpu.read() if gpu is not None else {})

    def _health_verdict(self, metrics: dict[str, float]) -> HealthVerdict:
        return self.health.check(metrics)

    def _evaluation_due(self, verdict: HealthVerdict) -> bool:
        if self.evaluation is None or verdict.status is HealthStatus.NAN:
            return False
        if self._collapse_stop(verdict) and not self.save_collapsed:
            return False
        return self.evaluation.due(self.env_steps)

    def _evaluate(self, checkpoint: Checkpoint) -> Checkpoint:
        assert self.evaluation is not None
        state = checkpoint.parts[ALGORITHM_PART]
        metrics = self.evaluation.run(
            module_weights(state),
            env_steps=self.env_steps,
            observation_filter=observation_filter_in(state, where="training", label="training"),
        )
        logger.info(
            "evaluation at {:,} env steps: {}",
            self.env_steps,
            " ".join(f"{k}={v:.3g}" for k, v in metrics.items()),
        )
        return dataclasses.replace(
            checkpoint, evaluation=metrics, best_metric=self.evaluation.best_metric
        )

    def _try_checkpoint(self, verdict: HealthVerdict) -> tuple[Checkpoint | None, HealthVerdict]:
        try:
            with self.clock.phase(CHECKPOINT):
                return self._checkpoint(verdict), verdict
        except TrainingHealthError as exc:  # the weights themselves went non-finite
            return None, HealthVerdict(HealthStatus.NAN, str(exc))

    def _collapse_stop(self, verdict: HealthVerdict) -> bool:
        return verdict.status is HealthStatus.COLLAPSED and self.stop_on_collapse

    def _watch(self, metrics: dict[str, float]) -> str | None:
        return self.on_iteration(self.algo, dict(metrics)) if self.on_iteration else None

    def _stop_reason(
        self, metrics: dict[str, float], verdict: HealthVerdict, watched: str | None = None
    ) -> str:
        if verdict.status is HealthStatus.NAN or (
            verdict.status is HealthStatus.COLLAPSED and self.stop_on_collapse
        ):
            return verdict.reason
        return self.stopper.stop_reason(metrics) or self.host_stop() or watched or ""

    def _checkpoint_due(self, reason: str, verdict: HealthVerdict) -> bool:
        if verdict.status is HealthStatus.NAN:
            return False
        if self._collapse_stop(verdict) and not self.save_collapsed:
            return False  # stopping on collapse: the last healthy checkpoint stays `latest`
        if reason:
            return self.checkpoint_at_stop
        return self.stopper.checkpoint_due(self.iteration, self.env_steps)

    def _checkpoint(self, verdict: HealthVerdict) -> Checkpoint:
        parts = snapshot_algorithm(self.algo)
        for participant in checkpoint_participants(self.algo):
            parts |= participant.checkpoint_parts()
        meta = {"env_steps": self.env_steps, "saved_at": time.time(), "spec_name": self.spec.name}
        if verdict.status is HealthStatus.COLLAPSED:
            # `--resume` refuses it without --force (rl_platform/run/resume.py).
            meta[HEALTH_META_KEY] = {"status": verdict.status.value, "reason": verdict.reason}
        return Checkpoint(iteration=self.iteration, parts=parts, meta=meta)


def instrument(algo: Any, clock: PhaseClock) -> None:
    """Time the learner group's updates, the env runners' weight syncs and the driver
    callbacks' own learning calls (`learning_methods()`: the off-policy path updates without
    the learner group, rl_platform/rllib/off_policy.py) as phases of `clock`, through a handler
    on each of these methods of this algorithm's objects, nothing global; a resumed loop's
    clock replaces the one before."""
    learner_group = getattr(algo, "learner_group", None)
    if learner_group is not None:
        around_learner_updates(learner_group, PHASE_CLOCK, functools.partial(clock.wrap, LEARN))
    env_runner_group = getattr(algo, "env_runner_group", None)
    if env_runner_group is not None:
        timed_sync = functools.partial(clock.wrap, WEIGHTS_SYNC)
        around_weight_syncs(env_runner_group, PHASE_CLOCK, timed_sync)
    for callback in _driver_callbacks(algo):
        if not hasattr(callback, "learning_methods"):
            continue
        for owner, method in callback.learning_methods():  # our own objects, not RLlib's
            patched = patch_call(owner, method, (PHASE_CLOCK,))
            patched.set(PHASE_CLOCK, functools.partial(clock.wrap, LEARN))
