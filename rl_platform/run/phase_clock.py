"""Where an iteration's wall time goes: `perf/sample_s`, `perf/learn_s`, ... (pure, no Ray).

An iteration is the wall time from the end of the previous iteration's split (or the loop's
start) to the moment its metrics row is made, so consecutive iterations tile the run: what
happens after a row is made (writing it, the progress line) counts in the next one's
`perf/other_s`. Inside it:

- `perf/learn_s`: time inside the learner group's `update` calls (RLlib's learner connector
  pipeline, GAE included, and every minibatch step), and inside the off-policy path's
  updates (SAC/DQN on the replay store, target syncs included), which run between its
  acting steps inside `training_step` (rl_platform/rllib/off_policy.py, `learning_methods`);
- `perf/weights_sync_s`: time inside the env runner group's `sync_weights` calls;
- `perf/sample_s`: the rest of `algo.train()` up to the end of its last learner or sync call:
  sampling and merging the env runners' metrics (for PPO, APPO and IMPALA: everything in
  `training_step` that is not learning or syncing; for the off-policy path: acting, stepping
  the envs and writing the replay rows);
- `perf/eval_s`, `perf/checkpoint_s`: the loop's evaluation, and its checkpoint (taking the
  state and writing it);
- `perf/other_s`: the remainder, so the six add up to `perf/iteration_s` exactly: the end of
  `algo.train()` (result compilation, driver callbacks such as the league's snapshots and
  slot reloads), metric extraction, health checks and the previous row's reporting.
"""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SAMPLE_KEY = "perf/sample_s"
LEARN_KEY = "perf/learn_s"
WEIGHTS_SYNC_KEY = "perf/weights_sync_s"
EVAL_KEY = "perf/eval_s"
CHECKPOINT_KEY = "perf/checkpoint_s"
OTHER_KEY = "perf/other_s"
ITERATION_KEY = "perf/iteration_s"
SPLIT_KEYS = (SAMPLE_KEY, LEARN_KEY, WEIGHTS_SYNC_KEY, EVAL_KEY, CHECKPOINT_KEY, OTHER_KEY)

TRAIN = "train"
LEARN = "learn"
WEIGHTS_SYNC = "weights_sync"
EVAL = "eval"
CHECKPOINT = "checkpoint"
_PHASE_KEYS = {
    LEARN: LEARN_KEY,
    WEIGHTS_SYNC: WEIGHTS_SYNC_KEY,
    EVAL: EVAL_KEY,
    CHECKPOINT: CHECKPOINT_KEY,
}


class PhaseClock:
    """Sums the time spent in named phases of one iteration (module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._started = clock()
        self._spent: dict[str, float] = {}
        self._train_tail = 0.0
        self._last_inner_end: float | None = None

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a block as `name`; phases inside `train` mark where its sampling part ends."""
        started = self._clock()
        try:
            yield
        finally:
            ended = self._clock()
            self._spent[name] = self._spent.get(name, 0.0) + ended - started
            if name == TRAIN:
                tail_from = self._last_inner_end if self._last_inner_end is not None else ended
                self._train_tail += ended - max(tail_from, started)
            elif name in (LEARN, WEIGHTS_SYNC):
                self._last_inner_end = ended

    def wrap(self, name: str, function: Callable) -> Callable:
        """`function` timed as phase `name` on every call."""

        def timed(*args, **kwargs):
            with self.phase(name):
                return function(*args, **kwargs)

        timed.__wrapped__ = function  # type: ignore[attr-defined]
        return timed

    def split(self) -> dict[str, float]:
        """The finished iteration's `perf/*` split; starts the next iteration."""
        now = self._clock()
        iteration = now - self._started
        spent = self._spent
        inner = spent.get(LEARN, 0.0) + spent.get(WEIGHTS_SYNC, 0.0)
        out = {key: spent.get(phase, 0.0) for phase, key in _PHASE_KEYS.items()}
        out[SAMPLE_KEY] = max(0.0, spent.get(TRAIN, 0.0) - inner - self._train_tail)
        accounted = sum(out.values())
        out[OTHER_KEY] = max(0.0, iteration - accounted)
        out[ITERATION_KEY] = max(iteration, accounted)
        self._started, self._spent = now, {}
        self._train_tail, self._last_inner_end = 0.0, None
        return out


def split_summary(metrics: dict[str, float]) -> str:
    """`sample 61% · learn 32% · other 7%` for the progress line ('' before any split);
    "other" is everything but sampling and learning (syncs, evaluation, checkpoints)."""
    total = metrics.get(ITERATION_KEY, 0.0)
    if SAMPLE_KEY not in metrics or total <= 0:
        return ""
    sample = round(100 * metrics[SAMPLE_KEY] / total)
    learn = round(100 * metrics.get(LEARN_KEY, 0.0) / total)
    return f"sample {sample}% · learn {learn}% · other {max(0, 100 - sample - learn)}%"
