"""Synchronous successive halving's rules (rl_platform/search/halving.py), its rung checkpoints
(rl_platform/run/stopping.py) and the spec settings it refuses; no Ray."""

import math

import pytest

from rl_platform.base.errors import SpecError
from rl_platform.run.stopping import CheckpointMarks, StopTracker
from rl_platform.search.budget import TrialBudget
from rl_platform.search.halving import (
    HalvingTable,
    RungDecision,
    TrialState,
    promotions,
    rung_marks,
    rungs,
)
from rl_platform.spec import validate_spec_data
from rl_platform.spec.sections import CheckpointSpec, StopSpec

RUNNING, WAITING, STOPPED, ENDED = (
    TrialState.RUNNING,
    TrialState.WAITING,
    TrialState.STOPPED,
    TrialState.ENDED,
)


def _table(trials: int, *, rungs=(10, 30), factor=3.0, mode="max", close=True) -> HalvingTable:
    table = HalvingTable(rungs=rungs, reduction_factor=factor, mode=mode)
    for index in range(trials):
        table.add(f"t{index}")
    if close:
        table.close()
    return table


def _report_all(table: HalvingTable, values: dict[str, float | None], *, time: float) -> None:
    for trial_id, value in values.items():
        table.report(trial_id, time=time, value=value)


def _states(table: HalvingTable, trials: int) -> list[TrialState]:
    return [table.state(f"t{index}") for index in range(trials)]


# --- rungs and promotion counts ------------------------------------------------------------


def test_rungs_lie_below_max_t_at_grace_times_powers_of_the_factor():
    assert rungs(TrialBudget("env_steps", 50_000, 8_000, 3.0)) == (8_000, 24_000)
    assert rungs(TrialBudget("env_steps", 2_000, 500, 2.0)) == (500, 1_000)
    # rounded up: on an integer axis `t >= 1250` is `t >= 1250.0`, `t >= 3125` is `>= 3125.0`
    assert rungs(TrialBudget("env_steps", 5_000, 500, 2.5)) == (500, 1_250, 3_125)
    # the shipped smoke profile: grace = max_t leaves no rung, every trial runs to max_t
    assert rungs(TrialBudget("env_steps", 8_000, 8_000, 3.0)) == ()


def test_rung_marks_are_on_the_loops_own_axis():
    by_iter = TrialBudget("training_iteration", 40, 4, 3.0)
    assert rung_marks(by_iter) == CheckpointMarks(axis="iteration", values=(4, 12, 36))
    by_steps = TrialBudget("env_steps", 2_000, 500, 2.0)
    assert rung_marks(by_steps) == CheckpointMarks(axis="env_steps", values=(500, 1_000))


@pytest.mark.parametrize(
    ("contestants", "factor", "kept"),
    [(8, 3, 3), (9, 3, 3), (3, 3, 1), (2, 3, 1), (1, 3, 1), (4, 2, 2), (6, 1.2, 5), (0, 3, 0)],
)
def test_promotions_are_ceil_of_n_over_the_factor_and_at_least_one(contestants, factor, kept):
    assert promotions(contestants, factor) == kept


# --- the cohort through its rungs ----------------------------------------------------------


def test_eight_trials_factor_three_keep_three_then_one_which_runs_to_max_t():
    table = _table(8)
    values = {f"t{i}": float(v) for i, v in enumerate([5, 80, 20, 70, 10, 60, 30, 40])}
    for trial_id, value in list(values.items())[:7]:
        table.report(trial_id, time=10, value=value)
        assert table.state(trial_id) is WAITING
        assert table.decide() == []  # t7 has not reached the rung yet
    table.report("t7", time=10, value=values["t7"])
    assert table.decide() == [
        RungDecision(rung=0, promoted=("t1", "t3", "t5"), stopped=("t7", "t6", "t2", "t4", "t0"))
    ]
    states = _states(table, 8)
    assert [f"t{i}" for i, state in enumerate(states) if state is RUNNING] == ["t1", "t3", "t5"]
    assert states.count(STOPPED) == 5
    # below the next rung nothing changes; the losers' late results are ignored
    table.report("t1", time=20, value=1.0)
    table.report("t0", time=20, value=1e9)
    assert table.decide() == [] and table.state("t1") is RUNNING
    _report_all(table, {"t1": 90.0, "t3": 95.0}, time=30)
    assert table.decide() == []  # t5 is still on its way
    table.report("t5", time=31, value=50.0)
    assert table.decide() == [RungDecision(rung=1, promoted=("t3",), stopped=("t1", "t5"))]
    assert table.state("t3") is RUNNING
    table.report("t3", time=45, value=99.0)  # past the last rung: runs on to max_t
    assert table.state("t3") is RUNNING and table.decide() == []


def test_min_mode_keeps_the_lowest():
    table = _table(4, factor=2.0, mode="min")
    _report_all(table, {"t0": 3.0, "t1": 1.0, "t2": 4.0, "t3": 2.0}, time=10)
    assert table.decide()[0].promoted == ("t1", "t3")


def test_no_rung_is_decided_before_the_cohort_is_closed():
    table = _table(3, close=False)
    _report_all(table, {"t0": 1.0, "t1": 2.0, "t2": 3.0}, time=10)
    assert table.decide() == [] and table.state("t0") is WAITING
    table.close()
    assert table.decide()[0].promoted == ("t2",)


def test_a_grid_cohort_is_every_trial_created_before_close():
    """2 samples x a grid of 3 values: Tune creates 6 trials, possibly over several steps."""
    table = _table(4, close=False)
    _report_all(table, {f"t{i}": float(i) for i in range(4)}, time=10)
    table.add("t4")
    table.add("t5")
    table.close()  # the searcher has created every grid point
    assert table.decide() == []  # t4 and t5 have not reached the rung
    _report_all(table, {"t4": 10.0, "t5": -1.0}, time=12)
    decision = table.decide()[0]
    assert decision.promoted == ("t4", "t3")  # ceil(6 / 3) = 2
    assert set(decision.stopped) == {"t0", "t1", "t2", "t5"}


def test_ties_go_to_the_trial_added_first():
    table = _table(4, factor=2.0)
    _report_all(table, {"t3": 1.0, "t2": 1.0, "t1": 1.0, "t0": 1.0}, time=10)
    assert table.decide()[0].promoted == ("t0", "t1")


@pytest.mark.parametrize("missing", [math.nan, None])
def test_nan_or_missing_metric_counts_as_worst(missing):
    table = _table(4, factor=2.0)
    _report_all(table, {"t0": missing, "t1": -100.0, "t2": missing, "t3": -50.0}, time=10)
    assert table.decide()[0].promoted == ("t3", "t1")


def test_nan_ties_are_broken_like_any_other_tie():
    table = _table(3, factor=3.0)
    _report_all(table, {"t0": math.nan, "t1": math.nan, "t2": math.nan}, time=10)
    assert table.decide()[0].promoted == ("t0",)


# --- trials that end on their own ----------------------------------------------------------


def test_an_ended_trial_counts_with_its_last_result_and_does_not_hold_the_rung():
    table = _table(4, factor=2.0)
    table.report("t0", time=4, value=500.0)  # e.g. reached its own stop.return_mean
    table.end("t0")
    table.report("t1", time=6, value=1.0)
    table.end("t1", value=2.0)  # collapsed, final value from Tune's last result
    _report_all(table, {"t2": 3.0, "t3": 4.0}, time=10)
    decision = table.decide()[0]
    # t0 takes a place (ceil(4 / 2) = 2) but has no rung to go on to
    assert decision == RungDecision(rung=0, promoted=("t0", "t3"), stopped=("t2",))
    assert [table.state(t) for t in ("t0", "t1", "t2", "t3")] == [ENDED, ENDED, STOPPED, RUNNING]
    # the next rung is t3's alone: one contestant, one goes on
    table.report("t3", time=30, value=0.0)
    assert table.decide() == [RungDecision(rung=1, promoted=("t3",), stopped=())]


def test_an_ended_trial_without_a_metric_is_worst_and_loses_ties_to_live_trials():
    table = _table(2, factor=2.0)
    table.end("t0")  # errored before its first result
    table.report("t1", time=10, value=None)
    assert table.decide() == [RungDecision(rung=0, promoted=("t1",), stopped=())]


def test_an_ended_promoted_trial_counts_at_the_next_rung():
    table = _table(3, factor=2.0)
    _report_all(table, {"t0": 3.0, "t1": 2.0, "t2": 1.0}, time=10)
    assert table.decide()[0].promoted == ("t0", "t1")
    table.end("t0", value=0.5)  # errored on its way to the next rung
    table.report("t1", time=30, value=0.1)
    assert table.decide() == [RungDecision(rung=1, promoted=("t0",), stopped=("t1",))]


def test_a_stopped_trials_end_keeps_it_stopped():
    table = _table(3)
    _report_all(table, {"t0": 3.0, "t1": 2.0, "t2": 1.0}, time=10)
    table.decide()
    table.end("t1", value=1e9)
    assert table.state("t1") is STOPPED


# --- results that skip rungs, retries, resumed searches ------------------------------------


def test_a_result_past_two_rungs_waits_at_the_next_one_after_promotion():
    table = _table(2, rungs=(10, 20, 40), factor=2.0)
    table.report("t0", time=25, value=9.0)  # one iteration crossed rungs 10 and 20
    table.report("t1", time=10, value=1.0)
    assert table.decide() == [
        RungDecision(rung=0, promoted=("t0",), stopped=("t1",)),
        RungDecision(rung=1, promoted=("t0",), stopped=()),
    ]
    assert table.state("t0") is RUNNING


def test_a_repeated_report_at_an_undecided_rung_replaces_the_record():
    table = _table(2, factor=2.0)
    table.report("t0", time=10, value=1.0)
    table.report("t0", time=11, value=5.0)  # retried from an older checkpoint, reached again
    table.report("t1", time=10, value=3.0)
    assert table.decide()[0].promoted == ("t0",)


def test_a_resumed_search_rebuilds_the_table_from_last_results():
    table = HalvingTable(rungs=(10, 30), reduction_factor=3.0, mode="max")
    # finished before the interruption: two lost at rung 0, one was paused at rung 0
    table.restore("t0", time=10, value=1.0, ended=True)
    table.restore("t1", time=11, value=2.0, ended=True)
    table.restore("t2", time=10, value=9.0, ended=False)
    table.restore("t3", time=3, value=None, ended=False)  # still on its way to rung 0
    table.close()
    assert table.state("t2") is WAITING and table.state("t3") is RUNNING
    assert table.decide() == []
    table.report("t3", time=10, value=5.0)
    assert table.decide() == [RungDecision(rung=0, promoted=("t2", "t3"), stopped=())]


# --- rung checkpoints in the training loop's tracker ---------------------------------------


def _due(tracker: StopTracker, points: list[tuple[int, int]]) -> list[int]:
    found = []
    for iteration, env_steps in points:
        if tracker.checkpoint_due(iteration, env_steps):
            tracker.mark_checkpoint(iteration, env_steps)
            found.append(env_steps)
    return found


def test_a_checkpoint_at_the_first_iteration_that_reaches_each_rung():
    marks = CheckpointMarks(axis="env_steps", values=(500, 1_000))
    spec = CheckpointSpec(every_iterations=None)
    tracker = StopTracker(StopSpec(env_steps=2_000), spec, marks=marks)
    points = [(i, 333 * i) for i in range(1, 7)]  # 333, 666, 999, 1332, ...
    assert _due(tracker, points) == [666, 1_332]


def test_a_trial_resumed_at_its_rung_does_not_checkpoint_that_rung_again():
    marks = CheckpointMarks(axis="env_steps", values=(500, 1_000))
    spec = CheckpointSpec(every_iterations=None)
    tracker = StopTracker(StopSpec(env_steps=2_000), spec, env_steps=502, iteration=1, marks=marks)
    assert _due(tracker, [(2, 1_004), (3, 1_506)]) == [1_004]


def test_iteration_marks_and_the_periodic_cadence_both_hold():
    marks = CheckpointMarks(axis="iteration", values=(2, 6))
    tracker = StopTracker(StopSpec(iterations=9), CheckpointSpec(every_iterations=4), marks=marks)
    # env steps stand in for the iteration here, to read the checkpointed iterations back
    assert _due(tracker, [(i, i) for i in range(1, 9)]) == [2, 4, 6, 8]


# --- spec settings halving refuses ---------------------------------------------------------


def _search_spec(**search):
    data = {"name": "demo", "env": {"id": "CartPole-v1"}, "stop": {"env_steps": 9000}}
    params = {"training.lr": {"loguniform": [1e-4, 1e-3]}}
    return validate_spec_data({**data, "search": {"params": params, **search}})


def test_halving_is_a_scheduler_type():
    spec = _search_spec(scheduler={"type": "halving"})
    assert spec.search is not None and spec.search.scheduler.type == "halving"


def test_halving_refuses_max_concurrent_and_says_what_to_set_instead():
    with pytest.raises(SpecError) as caught:
        _search_spec(scheduler={"type": "halving"}, max_concurrent=2)
    message = str(caught.value)
    assert "max_concurrent: 2" in message and "halving" in message
    assert "resources.cpu" in message


def test_halving_refuses_a_wall_clock_axis():
    with pytest.raises(SpecError, match=r"time_attr: time_total_s.*env_steps or training_it"):
        _search_spec(scheduler={"type": "halving", "time_attr": "time_total_s"})
