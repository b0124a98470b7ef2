"""Tune's side of synchronous successive halving (`rl_platform.search.halving`).

A trial that reports at its rung is PAUSEd: Tune saves it, and for a function trainable the
save is the checkpoint reported with that very result (`FunctionTrainable.save_checkpoint` in
ray/tune/trainable/function_trainable.py returns the last reported result), which the trainable
takes at every rung (`rung_marks`). When the rung is decided, paused losers are stopped here,
and `choose_trial_to_run` hands the paused winners back to Tune, which restores each from its
rung checkpoint. As in Tune's HyperBand (ray/tune/schedulers/hyperband.py), the trial whose
result completes a rung is not paused: it goes on or stops at once.

The cohort is complete once Tune's search algorithm has created every trial (`is_finished`),
so grids, pinned points and optuna's one-at-a-time trials need no counting here.
"""

from typing import Any

from loguru import logger
from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from rl_platform.ray_runtime.rllib_internals import mark_trial_for_experiment_state
from rl_platform.search.halving import HalvingTable, RungDecision, TrialState

_ACTIONS = {
    TrialState.RUNNING: TrialScheduler.CONTINUE,
    TrialState.WAITING: TrialScheduler.PAUSE,
    TrialState.STOPPED: TrialScheduler.STOP,
    TrialState.ENDED: TrialScheduler.STOP,
}
_FINISHED_STATUSES = (Trial.TERMINATED, Trial.ERROR)


class HalvingScheduler(FIFOScheduler):
    """See the module docstring. Metric and mode come from Tune (`TuneConfig`)."""

    # One result per `train()` call: the result that reaches a rung must be the one reported
    # with the rung checkpoint, not one of several buffered results (as HyperBand).
    _supports_buffered_results = False

    def __init__(self, *, time_attr: str, rungs: tuple[int, ...], reduction_factor: float) -> None:
        super().__init__()
        self._time_attr, self._rungs = time_attr, rungs
        self._reduction_factor = reduction_factor
        self._table: HalvingTable | None = None

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: Any) -> bool:
        if self._metric or not metric or mode not in ("max", "min"):
            return False
        self._metric = metric
        self._table = HalvingTable(
            rungs=self._rungs, reduction_factor=self._reduction_factor, mode=mode
        )
        return True

    @property
    def table(self) -> HalvingTable:
        if self._table is None:
            raise ValueError("HalvingScheduler needs metric and mode from tune.TuneConfig")
        return self._table

    def _value(self, result: dict) -> float | None:
        try:
            return float(result[self._metric])
        except (KeyError, TypeError, ValueError):
            return None

    def on_trial_add(self, tune_controller: Any, trial: Trial) -> None:
        self.table.add(trial.trial_id)
        last = trial.last_result or {}
        if self._time_attr not in last:
            return
        # A trial of a resumed search: Tune requeues every unfinished trial as PENDING and
        # starts it. One waiting at its rung stays paused instead (the controller files the
        # trial under its status after this hook, `TuneController.add_trial`), to be resumed
        # from its rung checkpoint once the rung is decided.
        self.table.restore(
            trial.trial_id,
            time=float(last[self._time_attr]),
            value=self._value(last),
            ended=trial.status in _FINISHED_STATUSES,
        )
        if trial.status == Trial.PENDING and self.table.state(trial.trial_id) is TrialState.WAITING:
            trial.set_status(Trial.PAUSED)

    def on_trial_result(self, tune_controller: Any, trial: Trial, result: dict) -> str:
        if self._time_attr not in result:
            return TrialScheduler.CONTINUE
        time = float(result[self._time_attr])
        self.table.report(trial.trial_id, time=time, value=self._value(result))
        self._settle(tune_controller, current=trial)
        return _ACTIONS[self.table.state(trial.trial_id)]

    def on_trial_complete(self, tune_controller: Any, trial: Trial, result: dict) -> None:
        self.table.end(trial.trial_id, value=self._value(result))
        self._settle(tune_controller, current=trial)

    def on_trial_remove(self, tune_controller: Any, trial: Trial) -> None:
        # Tune's stop of a trial without an actor (a paused one) does not mark it for the
        # experiment state (`rllib_internals.mark_trial_for_experiment_state`), so the saved
        # state would keep it PAUSED: results.csv would call the search interrupted and a
        # resume would run it again. Tune calls this hook with the controller itself.
        mark_trial_for_experiment_state(tune_controller, trial)
        self.table.end(trial.trial_id)
        self._settle(tune_controller, current=trial)

    def choose_trial_to_run(self, tune_controller: Any) -> Trial | None:
        """New (or retried) trials first, then paused trials that won their rung; never a
        trial waiting for its rung's decision."""
        self._settle(tune_controller)
        trials = tune_controller.get_trials()
        for trial in trials:
            if trial.status == Trial.PENDING:
                return trial
        for trial in trials:
            if trial.status == Trial.PAUSED and self.table.state(trial.trial_id) is (
                TrialState.RUNNING
            ):
                return trial
        return None

    def _settle(self, tune_controller: Any, current: Trial | None = None) -> None:
        """Close the cohort once every trial exists, note trials that ended (an errored trial
        out of retries is seen in ERROR here; Tune's error hook also fires before a retry, so
        it decides nothing), decide the rungs
        that are complete and stop their paused losers (a running loser stops at its next
        result; `current` gets its action from the caller)."""
        if tune_controller.search_alg.is_finished():
            self.table.close()
        trials = {trial.trial_id: trial for trial in tune_controller.get_trials()}
        for trial_id, trial in trials.items():
            if trial.status in _FINISHED_STATUSES:
                self.table.end(trial_id)
        for decision in self.table.decide():
            self._log(decision)
            for trial_id in decision.stopped:
                trial = trials[trial_id]
                if trial is current:
                    continue
                if trial.status in (Trial.PAUSED, Trial.PENDING) or trial.is_saving:
                    tune_controller.stop_trial(trial)

    def _log(self, decision: RungDecision) -> None:
        logger.info(
            "halving: rung {} ({} {}): {} go on, {} stopped",
            decision.rung,
            self._rungs[decision.rung],
            self._time_attr,
            len(decision.promoted),
            len(decision.stopped),
        )

    def debug_string(self) -> str:
        rungs = ", ".join(str(rung) for rung in self._rungs) or "none below max_t"
        factor = self._reduction_factor
        return f"Synchronous successive halving on {self._time_attr}: rungs {rungs}, 1/{factor}"
