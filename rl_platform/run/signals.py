"""Stop on SIGINT/SIGTERM: finish the iteration, save a final checkpoint, exit; within a bound.

Installed after `ray.init` because Ray replaces the SIGTERM handler when it starts.

* The first signal asks for a graceful stop: the training loop checks `requested` between
  iterations, saves a final checkpoint and returns (exit 0).
* The stop is bounded by the cluster's stop grace (`RLP_STOP_GRACE_S`, default 60 s, the time
  `rlp submit` gives a job before Ray's supervisor SIGKILLs it 15 s later). A run whose
  iteration does not end in time (a user env whose `step()` hangs, a stuck learner) is ended
  by a forced exit: one line, exit code 128 + the signal (143 for SIGTERM), no final
  checkpoint; every checkpoint already written is complete and stays (they are atomic).
* A second SIGTERM forces that exit at once; a second SIGINT raises KeyboardInterrupt (exit
  130), as Ctrl+C twice always did.
* One Ctrl+C can arrive twice (the terminal signals the whole process group and a wrapper such
  as `uv run` may forward it): a repeat within `DUPLICATE_WINDOW_S` of the first is the same
  request and must not cost the final checkpoint.

A forced exit raises `SystemExit` in the main thread (signal handlers run there, also while it
waits in an env's `step()` or in `ray.get`), so the run's `finally` blocks release its lock and
stop Ray; if that unwinding itself hangs, `os._exit` ends the process `FORCE_EXIT_MARGIN_S`
later. Only the main thread can install handlers; a run trained from another thread has none
(`StopRequest.install`).
"""

import _thread
import os
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

from loguru import logger

from rl_platform.utils.stop_grace import DEFAULT_STOP_GRACE_S, STOP_GRACE_ENV_VAR

DUPLICATE_WINDOW_S = 1.0
FORCE_EXIT_MARGIN_S = 10.0
"""How long a forced exit may spend unwinding (stopping Ray, releasing the lock) before
`os._exit`; well inside the 15 s Ray's job supervisor waits after the grace."""


class StopRequest:
    """Flag set by the first SIGINT/SIGTERM; the training loop checks it between iterations.
    See the module docstring for the bound on how long a stop may take."""

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        *,
        grace_s: float = DEFAULT_STOP_GRACE_S,
        last_checkpoint: Callable[[], object] = lambda: None,
        interrupt_main: Callable[[int], None] = _thread.interrupt_main,
        exit_process: Callable[[int], None] = os._exit,
        margin_s: float = FORCE_EXIT_MARGIN_S,
    ) -> None:
        self.signal_name: str | None = None
        self._previous: dict[int, object] = {}
        self._clock = clock
        self._first_at = 0.0
        self._grace_s = grace_s
        self._last_checkpoint = last_checkpoint
        self._interrupt_main, self._exit_process = interrupt_main, exit_process
        self._margin_s = margin_s
        self._deadline: threading.Timer | None = None
        self._overdue = False
        self._finished = False

    def install(self) -> "StopRequest":
        """Handle SIGINT/SIGTERM from now on. Python lets only the main thread install signal
        handlers: `rl_platform.train` called from another thread trains without them (its
        host, which owns the main thread, decides how the process stops)."""
        if threading.current_thread() is not threading.main_thread():
            logger.debug("not the main thread: no SIGINT/SIGTERM handlers for this run")
            return self
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if self._overdue:
            self._force_exit(signum, f"the run did not stop within {self._grace_text()}")
        if self.signal_name is not None:
            if self._clock() - self._first_at < DUPLICATE_WINDOW_S:
                logger.info("{} again within {} s: one request, ignored", name, DUPLICATE_WINDOW_S)
                return
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            self._force_exit(signum, f"{name} received twice")
        self.signal_name = name
        self._first_at = self._clock()
        logger.warning(
            "{} received: saving a final checkpoint after this iteration (at most {}; "
            "{} again exits at once)",
            name,
            self._grace_text(),
            name,
        )
        self._deadline = threading.Timer(self._grace_s, self._expire, args=(signum,))
        self._deadline.daemon = True
        self._deadline.start()

    def _grace_text(self) -> str:
        return f"{STOP_GRACE_ENV_VAR}={self._grace_s:g} s"

    def _expire(self, signum: int) -> None:
        """Timer thread, at the end of the grace: make the main thread exit (its handler sees
        `_overdue`), and end the process outright if it has not exited a margin later."""
        if self._finished:
            return
        self._overdue = True
        self._interrupt_main(signum)
        time.sleep(self._margin_s)
        if not self._finished:
            self._exit_process(_exit_code(signum))

    def _force_exit(self, signum: int, why: str) -> None:
        """One line, then `SystemExit` in the main thread, with `os._exit` as the backstop."""
        code = _exit_code(signum)
        latest = self._last_checkpoint()
        logger.error(
            "{}: exiting now with code {}; the last complete checkpoint is kept: {}",
            why,
            code,
            latest or "none yet",
        )
        backstop = threading.Timer(self._margin_s, self._exit_process, args=(code,))
        backstop.daemon = True
        backstop.start()
        raise SystemExit(code)

    @property
    def requested(self) -> bool:
        return self.signal_name is not None

    def reason(self) -> str | None:
        """The stop reason once a signal arrived (`signal SIGTERM`), else None."""
        return f"signal {self.signal_name}" if self.signal_name is not None else None

    def restore(self) -> None:
        """The run stopped in time: no forced exit, the previous handlers back."""
        self._finished = True
        if self._deadline is not None:
            self._deadline.cancel()
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)  # type: ignore[arg-type]
        self._previous.clear()


def _exit_code(signum: int) -> int:
    """128 + the signal, the shell's convention (143 for SIGTERM; `INTERRUPTED_EXIT` is 130)."""
    return 128 + signum
