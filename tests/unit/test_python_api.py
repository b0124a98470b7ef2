"""`rl_platform.train` as scripts and notebooks call it (#59, round 5): a spec changed after
loading is validated again, and calls from several threads run one after another. No Ray
starts: the run's first step after the checks is replaced by a fake."""

import threading
import time

import pytest

import rl_platform
from rl_platform.base.errors import SpecError, UserError
from rl_platform.run import train as train_module
from rl_platform.spec import load_spec
from tests.conftest import EXPERIMENTS


class _RunReached(Exception):
    """Raised by the fake in place of a run's first step after the checks."""


def test_a_spec_changed_after_loading_raises_the_spec_error_its_file_would(tmp_path, monkeypatch):
    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml")
    bad = spec.model_copy(update={"training": spec.training.model_copy(update={"gamma": 5.0})})
    assert bad.training.gamma == 5.0  # model_copy runs no validator

    def reached(spec):
        raise _RunReached

    monkeypatch.setattr(train_module, "_check_before_any_file", reached)
    with pytest.raises(SpecError, match=r"training\.gamma: 5\.0 is invalid"):
        rl_platform.train(bad, out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(_RunReached):  # the spec as loaded goes on to the run
        rl_platform.train(spec, out_dir=tmp_path)


class _SlowStart:
    """A run's start that takes a while and counts how many are inside it at once."""

    def __init__(self, hold_s: float) -> None:
        self.hold_s, self.inside, self.most, self.entered = hold_s, 0, 0, 0
        self.guard = threading.Lock()
        self.second = threading.Event()

    def __call__(self, spec) -> None:
        with self.guard:
            self.inside += 1
            self.entered += 1
            self.most = max(self.most, self.inside)
            if self.entered == 2:
                self.second.set()
        self.second.wait(self.hold_s)  # a second call that got in meanwhile is seen at once
        with self.guard:
            self.inside -= 1
        raise _RunReached


def test_calls_from_two_threads_run_one_after_the_other(tmp_path, monkeypatch):
    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml")
    start = _SlowStart(hold_s=0.5)
    monkeypatch.setattr(train_module, "_check_before_any_file", start)
    outcomes: list[str] = []

    def call() -> None:
        try:
            rl_platform.train(spec, out_dir=tmp_path)
        except _RunReached:
            outcomes.append("ran")

    threads = [threading.Thread(target=call) for _ in range(2)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)  # never a hang
    assert outcomes == ["ran", "ran"] and start.entered == 2
    assert start.most == 1  # the second waited for the first
    assert time.monotonic() - began >= 0.5


def test_a_call_from_inside_a_run_of_the_same_thread_is_refused(tmp_path, monkeypatch):
    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml")

    def nested(inner_spec) -> None:
        with pytest.raises(UserError, match="from inside a run of the same thread"):
            rl_platform.train(spec, out_dir=tmp_path)
        raise _RunReached

    monkeypatch.setattr(train_module, "_check_before_any_file", nested)
    with pytest.raises(_RunReached):
        rl_platform.train(spec, out_dir=tmp_path)
    assert list(tmp_path.iterdir()) == []
