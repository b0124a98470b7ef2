"""Graceful stop on SIGINT/SIGTERM: finish the iteration, save a final checkpoint, exit.

Installed after `ray.init` because Ray replaces the SIGTERM handler when it starts. A second
SIGINT while stopping raises KeyboardInterrupt as usual so a stuck run can still be killed.
"""

import signal
from types import FrameType

from loguru import logger


class StopRequest:
    """Flag set by the first SIGINT/SIGTERM; the training loop checks it between iterations."""

    def __init__(self) -> None:
        self.signal_name: str | None = None
        self._previous: dict[int, object] = {}

    def install(self) -> "StopRequest":
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self.signal_name is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt
        self.signal_name = name
        logger.warning("{} received: saving a final checkpoint after this iteration", name)

    @property
    def requested(self) -> bool:
        return self.signal_name is not None

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()
