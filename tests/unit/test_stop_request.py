"""`StopRequest`: one Ctrl+C delivered twice is one request; a later second one still kills.
(The bound on a stop, and a second SIGTERM: tests/reliability/test_hung_stop.py.)"""

import signal

import pytest

from rl_platform.run.signals import DUPLICATE_WINDOW_S, StopRequest


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _stop(clock: FakeClock) -> StopRequest:
    """Its grace timer can never interrupt or end the test process."""
    return StopRequest(clock=clock, interrupt_main=lambda signum: None, exit_process=print)


def test_duplicate_sigint_within_the_window_is_ignored() -> None:
    clock = FakeClock()
    stop = _stop(clock)
    stop._handle(signal.SIGINT, None)
    clock.now += DUPLICATE_WINDOW_S / 10
    stop._handle(signal.SIGINT, None)  # e.g. the terminal's signal plus `uv run` forwarding it
    assert stop.requested and stop.signal_name == "SIGINT"
    stop.restore()


def test_second_sigint_after_the_window_raises_keyboard_interrupt() -> None:
    clock = FakeClock()
    stop = _stop(clock)
    stop._handle(signal.SIGINT, None)
    clock.now += DUPLICATE_WINDOW_S * 2
    with pytest.raises(KeyboardInterrupt):
        stop._handle(signal.SIGINT, None)
    stop.restore()


def test_sigterm_requests_a_stop_and_a_repeat_within_the_window_is_ignored() -> None:
    clock = FakeClock()
    stop = _stop(clock)
    assert not stop.requested
    stop._handle(signal.SIGTERM, None)
    clock.now += DUPLICATE_WINDOW_S / 10
    stop._handle(signal.SIGTERM, None)
    assert stop.signal_name == "SIGTERM"
    stop.restore()
