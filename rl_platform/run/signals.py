"""Graceful stop on SIGINT/SIGTERM: finish the iteration, save a final checkpoint, exit.

Installed after `ray.init` because Ray replaces the SIGTERM handler when it starts. A second
SIGINT while stopping raises KeyboardInterrupt as usual so a stuck run can still be killed,
unless it comes within `DUPLICATE_WINDOW_S` of the first: one Ctrl+C can arrive twice (the
terminal signals the whole process group and a wrapper such as `uv run` may forward it), and
that must not cost the final checkpoint.
"""

import signal
import time
from collections.abc import Callable
from types import FrameType

from loguru import logger

DUPLICATE_WINDOW_S = 1.0


class StopRequest:
    """Flag set by the first SIGINT/SIGTERM; the training loop checks it between iterations."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.signal_name: str | None = None
        self._previous: dict[int, object] = {}
        self._clock = clock
        self._first_at = 0.0

    def install(self) -> "StopRequest":
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.signal_name is not None:
            if self._clock() - self._first_at < DUPLICATE_WINDOW_S:
                logger.info("{} again within {} s: one request, ignored", name, DUPLICATE_WINDOW_S)
                return
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
        self.signal_name = name
        self._first_at = self._clock()
        logger.warning("{} received: saving a final checkpoint after this iteration", name)

    @property
    def requested(self) -> bool:
        return self.signal_name is not None

    def reason(self) -> str | None:
        """The stop reason once a signal arrived (`signal SIGTERM`), else None."""
        return f"signal {self.signal_name}" if self.signal_name is not None else None

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()
