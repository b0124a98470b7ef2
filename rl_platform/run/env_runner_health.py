"""Remote env runners that are lost mid-run: restarted and waited for, or named.

RLlib restarts a crashed remote env runner up to `max_num_env_runner_restarts` times (set in
`rllib.config`). While one is lost (SIGKILLed, killed by the kernel for memory, crashed, frozen),
`Algorithm.train()` samples nothing from it: with one runner the iteration has no samples,
PPO returns before its update, and the iteration's losses read NaN. The training loop
(`run/loop.py`) hands such an iteration to `LostRunnerWait` instead of counting it: a frozen
runner (RLlib keeps it in service once its sampling timed out, after `sample_timeout_s`, 60 s
by default) is killed so that Ray restarts it, the loop waits and trains the iteration again,
so the run ends at the iteration and env steps an unkilled run ends at. A runner that is dead
for good (restart limit used up), or not back within `RLP_RUNNER_RETURN_S` (default 120 s), stops
the run with `TrainingHealthError` (exit 3) naming the runner and why it was lost; the last
checkpoint stays `latest`.
"""

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ray
from loguru import logger
from ray.exceptions import ActorDiedError, GetTimeoutError, RayError

from rl_platform.base.errors import TrainingHealthError
from rl_platform.ray_runtime.rllib_internals import env_runner_actors
from rl_platform.ray_runtime.worker_output import take_env_errors
from rl_platform.utils.env_seconds import seconds_from_env
from rl_platform.utils.oom_kills import oom_kill_count

PING_TIMEOUT_S = 10.0
RUNNER_RETURN_ENV = "RLP_RUNNER_RETURN_S"
DEFAULT_RUNNER_RETURN_S = 120.0
RETRY_PAUSE_S = 1.0
"""Between two tries of an iteration that sampled nothing (Ray restarts an actor meanwhile)."""


@dataclass(frozen=True)
class LostRunner:
    index: int
    """RLlib's env runner index (1, 2, ...)."""
    cause: str
    dead: bool
    """Dead for good: Ray will not restart it."""

    def describe(self) -> str:
        return f"env runner {self.index} ({self.cause})"


def runner_return_s(environ: Mapping[str, str] | None = None) -> float:
    """`RLP_RUNNER_RETURN_S` in seconds, else the default."""
    return seconds_from_env(RUNNER_RETURN_ENV, DEFAULT_RUNNER_RETURN_S, environ)


def has_remote_env_runners(algo: Any) -> bool:
    group = getattr(algo, "env_runner_group", None)
    return group is not None and group.num_remote_env_runners() > 0


def lost_env_runners(
    algo: Any, *, oom_kills_before: int | None, ping_all: bool = False
) -> list[LostRunner]:
    """The remote env runners RLlib holds out of service (`ping_all`: and those it counts as
    healthy that do not answer), each with why; a frozen one (alive, not answering) is killed
    here so that Ray restarts it: RLlib keeps a runner whose sampling timed out in service."""
    group = algo.env_runner_group
    healthy = set(group.healthy_env_runner_ids())
    oom = _oom_note(oom_kills_before)
    lost = []
    for index, actor in env_runner_actors(group).items():
        if index in healthy and not ping_all:
            continue
        try:
            ray.get(actor.ping.remote(), timeout=PING_TIMEOUT_S)
            if index not in healthy:
                lost.append(LostRunner(index, "back, rejoining", dead=False))
        except ActorDiedError as exc:
            died = oom or "its process died and Ray will not restart it: " + _first_line(exc)
            lost.append(LostRunner(index, died, dead=True))
        except GetTimeoutError:
            ray.kill(actor, no_restart=False)  # frozen: end it, Ray starts it again
            lost.append(LostRunner(index, f"frozen for {PING_TIMEOUT_S:g} s, restarted", False))
        except RayError:  # restarting, or unavailable for now
            lost.append(LostRunner(index, oom or "its process was lost; Ray restarts it", False))
    return lost


def _oom_note(before: int | None) -> str | None:
    after = oom_kill_count()
    if before is None or after is None or after <= before:
        return None
    rose = after - before
    return (
        f"killed by the kernel's out-of-memory killer (the cgroup's oom_kill count rose by {rose})"
    )


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:100] if text else type(exc).__name__


ASYNC_SAMPLING = frozenset({"APPO", "IMPALA"})
"""Algorithms whose iterations learn from what runners sampled before (RLlib's aggregation):
one that sampled nothing new with every runner in service is an ordinary iteration."""


class LostRunnerWait:
    """The loop's wait for lost env runners, from the first iteration that sampled nothing.
    `synchronous`: the algorithm learns only from the iteration's own samples (PPO, DQN,
    SAC), so an iteration without any is never counted, lost runner or not."""

    def __init__(
        self, algo: Any, *, return_s: float, oom_kills_before: int | None, synchronous: bool
    ) -> None:
        self.algo, self.return_s, self.oom_kills_before = algo, return_s, oom_kills_before
        self.synchronous = synchronous
        self.since: float | None = None

    def sampled(self) -> None:
        """The iteration sampled: whatever was lost is back."""
        if self.since is not None:
            logger.info("env runners back after {:.0f} s; training goes on", self._waited())
        self.since = None

    def sampled_nothing(self, *, iteration: int) -> bool:
        """Whether the iteration is to be tried again (after a pause); `TrainingHealthError`
        when the runners are lost for good or not back in time."""
        lost = lost_env_runners(self.algo, oom_kills_before=self.oom_kills_before, ping_all=True)
        if not lost and not self.synchronous:
            return False
        first = self.since is None
        if first:
            self.since = time.monotonic()
        names = "; ".join(runner.describe() for runner in lost) or "no runner is out of service"
        if env_errors := take_env_errors():  # RLlib ends a runner whose env raised
            names += f"; its env failed: {env_errors[-1]}"
        total = self.algo.env_runner_group.num_remote_env_runners()
        if lost and all(runner.dead for runner in lost) and len(lost) == total:
            raise _all_lost(self.algo, lost, iteration=iteration)
        if self._waited() > self.return_s:
            raise TrainingHealthError(
                f"iteration {iteration}: no env steps sampled for {self._waited():.0f} s "
                f"({RUNNER_RETURN_ENV}={self.return_s:g} s): {names}"
            )
        if first:
            logger.warning(
                "iteration {} sampled nothing: {}; it does not count and is trained again once "
                "the runner is back (waiting up to {}={:g} s)",
                iteration,
                names,
                RUNNER_RETURN_ENV,
                self.return_s,
            )
        time.sleep(RETRY_PAUSE_S)
        return True

    def _waited(self) -> float:
        return 0.0 if self.since is None else time.monotonic() - self.since


def check_env_runners(algo: Any, *, iteration: int) -> None:
    """Raise `TrainingHealthError` when every remote env runner is permanently dead."""
    group = getattr(algo, "env_runner_group", None)
    if group is None or group.num_remote_env_runners() == 0:
        return
    if group.num_healthy_remote_env_runners() > 0:
        return
    lost = lost_env_runners(algo, oom_kills_before=None)
    if lost and all(runner.dead for runner in lost):
        raise _all_lost(algo, lost, iteration=iteration)


def _all_lost(algo: Any, lost: list[LostRunner], *, iteration: int) -> TrainingHealthError:
    limit = algo.config.max_num_env_runner_restarts
    names = "; ".join(runner.describe() for runner in lost)
    return TrainingHealthError(
        f"iteration {iteration}: all {len(lost)} env runner(s) were lost and restarted the "
        f"maximum {limit} time(s) ({names}); no env steps can be sampled any more, so training "
        "stopped (the env runners' own output is in the run's train.log)"
    )
