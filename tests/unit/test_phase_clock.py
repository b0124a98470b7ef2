"""Where an iteration's time goes: the phase clock's split tiles the iteration (no Ray)."""

from types import SimpleNamespace

import pytest

from rl_platform.run.loop import instrument
from rl_platform.run.phase_clock import (
    CHECKPOINT,
    EVAL,
    ITERATION_KEY,
    LEARN,
    SPLIT_KEYS,
    TRAIN,
    WEIGHTS_SYNC,
    PhaseClock,
    split_summary,
)


class FakeClock:
    """A clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _iteration(clock: PhaseClock, time: FakeClock) -> None:
    """train = 2 s sampling + 5 s learning + 1 s sync + 0.5 s tail; eval 3 s; checkpoint 1.5 s;
    0.25 s before train and 0.75 s at the end outside any phase."""
    time.advance(0.25)
    with clock.phase(TRAIN):
        time.advance(2.0)
        with clock.phase(LEARN):
            time.advance(5.0)
        with clock.phase(WEIGHTS_SYNC):
            time.advance(1.0)
        time.advance(0.5)
    with clock.phase(EVAL):
        time.advance(3.0)
    with clock.phase(CHECKPOINT):
        time.advance(1.5)
    time.advance(0.75)


def test_the_split_names_each_phase_and_tiles_the_iteration() -> None:
    time = FakeClock()
    clock = PhaseClock(clock=time)
    _iteration(clock, time)
    split = clock.split()
    assert split["perf/sample_s"] == pytest.approx(2.0)
    assert split["perf/learn_s"] == pytest.approx(5.0)
    assert split["perf/weights_sync_s"] == pytest.approx(1.0)
    assert split["perf/eval_s"] == pytest.approx(3.0)
    assert split["perf/checkpoint_s"] == pytest.approx(1.5)
    # the train tail (0.5) and the time outside phases (0.25 + 0.75) are "other"
    assert split["perf/other_s"] == pytest.approx(1.5)
    assert split[ITERATION_KEY] == pytest.approx(14.0)
    assert sum(split[k] for k in SPLIT_KEYS) == pytest.approx(split[ITERATION_KEY])


def test_consecutive_iterations_tile_the_run() -> None:
    """What happens after a split (writing the row) counts in the next iteration."""
    time = FakeClock()
    clock = PhaseClock(clock=time)
    _iteration(clock, time)
    first = clock.split()
    time.advance(0.4)  # reporting the first row
    _iteration(clock, time)
    second = clock.split()
    assert second[ITERATION_KEY] == pytest.approx(first[ITERATION_KEY] + 0.4)
    assert second["perf/other_s"] == pytest.approx(first["perf/other_s"] + 0.4)
    assert second["perf/learn_s"] == pytest.approx(5.0)  # phases restart at each split


def test_a_train_without_learner_calls_is_all_sampling() -> None:
    time = FakeClock()
    clock = PhaseClock(clock=time)
    with clock.phase(TRAIN):
        time.advance(4.0)
    split = clock.split()
    assert split["perf/sample_s"] == pytest.approx(4.0)
    assert split["perf/other_s"] == pytest.approx(0.0)


def test_wrap_times_every_call_and_keeps_the_function() -> None:
    time = FakeClock()
    clock = PhaseClock(clock=time)

    def update(steps: int) -> int:
        time.advance(steps)
        return steps * 2

    timed = clock.wrap(LEARN, update)
    with clock.phase(TRAIN):
        assert timed(1) == 2 and timed(2) == 4
    assert timed.__wrapped__ is update
    assert clock.split()["perf/learn_s"] == pytest.approx(3.0)


class FakeOffPolicyDriver:
    """Acts 1 s and learns 2 s per step, as the off-policy path's `training_step` does
    without calling the learner group (rl_platform/rllib/off_policy.py)."""

    def __init__(self, time: FakeClock) -> None:
        self.time = time

    def training_step(self, steps: int) -> None:
        for _ in range(steps):
            self.time.advance(1.0)  # acting and the env step
            self.learn()
        self.time.advance(0.5)  # the iteration's metrics

    def learn(self) -> None:
        self.time.advance(2.0)


def test_a_callbacks_learning_methods_count_as_learning() -> None:
    time = FakeClock()
    clock = PhaseClock(clock=time)
    driver = FakeOffPolicyDriver(time)
    callback = SimpleNamespace(learning_methods=lambda: [(driver, "learn")])
    algo = SimpleNamespace(callbacks=[callback])
    instrument(algo, clock)
    instrument(algo, clock)  # a resumed loop wraps once
    with clock.phase(TRAIN):
        driver.training_step(3)
    split = clock.split()
    assert split["perf/learn_s"] == pytest.approx(6.0)
    assert split["perf/sample_s"] == pytest.approx(3.0)
    assert split["perf/other_s"] == pytest.approx(0.5)  # after the last update


def test_the_progress_line_shows_the_shares() -> None:
    metrics = {"perf/iteration_s": 10.0, "perf/sample_s": 6.1, "perf/learn_s": 3.2}
    assert split_summary(metrics) == "sample 61% · learn 32% · other 7%"
    assert split_summary({"perf/iteration_s": 1.0}) == ""
