"""Acting on the next batch while the learner updates on this one (`resources.overlap`).

With overlap on, the array runner's `sample()` hands back the rollout played while the
learner was busy and starts the next one on a worker thread at once: the learner's update of
batch k and the acting of batch k + 1 run side by side (two cores, or the CPU and the GPU).
Batch k + 1 is played by the weights the learner had before it updated on batch k, one
policy version of lag, which PPO's importance ratio corrects (the log-probabilities are the
acting policy's); Sample Factory's asynchronous PPO runs with more (its `max_policy_lag`).

Nothing outside the rollout may touch the runner's games or modules while one is in flight:
the runner calls `wait()` before it sets or reads its state, before a league installs
weights into its slots, and before any synchronous sample. Metrics the rollout logs are
recorded (`DeferredLog`) and replayed into the runner's logger when the rollout is taken, so
an iteration reports the samples it trains on, exactly as without overlap.
"""

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class DeferredLog:
    """A metrics logger's `log_value` calls, kept to be replayed on the runner's thread."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple, dict]] = []

    def log_value(self, *args: Any, **kwargs: Any) -> None:
        self.calls.append((args, kwargs))

    def replay(self, logger: Any) -> None:
        for args, kwargs in self.calls:
            logger.log_value(*args, **kwargs)
        self.calls.clear()


class RolloutInFlight:
    """At most one rollout played on a worker thread, and its finished result."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rlp-rollout")
        self._future: Future | None = None
        self._log = DeferredLog()
        self._ready: Any = None

    def start(self, play: Callable[[DeferredLog], Any]) -> None:
        """Play `play(log)` on the worker thread (after any rollout in flight is done)."""
        if self._future is not None or self._ready is not None:
            raise RuntimeError("a rollout is already in flight or waiting to be taken")
        self._future = self._executor.submit(play, self._log)

    def wait(self) -> None:
        """Let the rollout in flight finish (its errors raise here); its result and its
        metrics wait for `take`."""
        if self._future is None:
            return
        future, self._future = self._future, None
        self._ready = future.result()

    def take(self, logger: Any) -> Any:
        """The finished rollout (waiting for it if needed), or None if none was started; its
        metrics are replayed into `logger` now. Not earlier: in a local runner the driver's
        results of the iteration before may still read the logger's statistics objects."""
        self.wait()
        self._log.replay(logger)
        ready, self._ready = self._ready, None
        return ready

    def close(self) -> None:
        """Finish what is in flight and drop it; the worker thread ends."""
        try:
            self.wait()
        finally:
            self._ready = None
            self._log.calls.clear()
            self._executor.shutdown(wait=True)
