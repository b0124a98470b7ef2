"""`RolloutInFlight`: one rollout on a worker thread, its metrics replayed when taken (no Ray)."""

import threading

import pytest

from rl_platform.sampling.overlap import RolloutInFlight


class _Logger:
    def __init__(self) -> None:
        self.values: list[tuple] = []

    def log_value(self, *args, **kwargs) -> None:
        self.values.append((args, kwargs))


def test_a_rollout_runs_on_another_thread_and_its_metrics_wait_for_take() -> None:
    inflight, logger = RolloutInFlight(), _Logger()
    assert inflight.take(logger) is None  # nothing started yet
    release = threading.Event()
    seen: list[str] = []

    def play(log):
        seen.append(threading.current_thread().name)
        release.wait(5)
        log.log_value("num_episodes", 3, reduce="sum")
        return "batch 2"

    inflight.start(play)
    with pytest.raises(RuntimeError, match="already in flight"):
        inflight.start(play)
    release.set()
    inflight.wait()  # finished, but its metrics are not in the logger yet
    assert logger.values == []
    assert inflight.take(logger) == "batch 2"
    assert logger.values == [(("num_episodes", 3), {"reduce": "sum"})]
    assert seen and seen[0].startswith("rlp-rollout")
    inflight.close()


def test_an_error_in_the_rollout_raises_where_it_is_waited_for() -> None:
    inflight = RolloutInFlight()

    def play(log):
        raise ValueError("the game broke")

    inflight.start(play)
    with pytest.raises(ValueError, match="the game broke"):
        inflight.take(_Logger())
    inflight.close()
