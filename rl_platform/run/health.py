"""The health verdict on each iteration's metrics (pure): NaN/Inf updates, entropy collapse,
oversized updates and dead reward terms.

One monitor for `rlp train` and search trials; the training loop decides what each host does
with a collapse (`health.on_collapse`; a trial always stops). Every finding is also a metric
(`health/...` = 1.0), so every sink sees it, and a warning in the log.
"""

import math
from dataclasses import dataclass
from enum import StrEnum

import gymnasium as gym
import numpy as np
from loguru import logger

from rl_platform.base.metric_keys import APPROX_KL, BC_COEF, CLIP_FRAC, ENTROPY
from rl_platform.run.metrics import REWARD_PREFIX, is_nonfinite_update
from rl_platform.spec.sections import HealthSpec

NONFINITE_KEY = "health/nonfinite"
COLLAPSE_KEY = "health/entropy_collapse"
APPROX_KL_HIGH_KEY = "health/approx_kl_high"
CLIP_FRAC_HIGH_KEY = "health/clip_frac_high"
REWARD_ZERO_PREFIX = "health/reward_zero/"
REPEAT_WARNING_EVERY = 50
"""A finding that holds iteration after iteration is logged when it starts and then once per
this many iterations (its `health/...` flag is set every time)."""
HEALTH_META_KEY = "health"
"""Checkpoint meta key flagging weights saved while the policy was collapsed."""


class HealthStatus(StrEnum):
    OK = "ok"
    COLLAPSED = "collapsed"
    NAN = "nan"


@dataclass(frozen=True)
class HealthVerdict:
    status: HealthStatus
    reason: str = ""


HEALTHY = HealthVerdict(HealthStatus.OK)


def max_entropy(action_space: gym.Space) -> float | None:
    """The entropy of the uniform policy (nats): log n per discrete choice; None for
    continuous actions, whose differential entropy has no maximum."""
    if isinstance(action_space, gym.spaces.Discrete):
        return math.log(int(action_space.n)) if action_space.n > 1 else None
    if isinstance(action_space, gym.spaces.MultiDiscrete):
        total = float(np.log(np.asarray(action_space.nvec, dtype=np.float64)).sum())
        return total if total > 0 else None
    return None


def entropy_floor(health: HealthSpec, max_entropy: float | None) -> float | None:
    """`health.min_entropy`, else `min_entropy_fraction` of the maximum entropy (None when the
    action space has no maximum, e.g. continuous actions, or the fraction is 0)."""
    if health.min_entropy is not None:
        return health.min_entropy
    if max_entropy is None or health.min_entropy_fraction == 0.0:
        return None
    return health.min_entropy_fraction * max_entropy


class HealthMonitor:
    """Checks one iteration's metrics at a time; remembers how long reward terms stayed 0."""

    def __init__(self, health: HealthSpec, *, max_entropy: float | None) -> None:
        self.health = health
        self.entropy_floor = entropy_floor(health, max_entropy)
        self._zero_streak: dict[str, int] = {}
        self._high_streak: dict[str, int] = {}

    def check(self, metrics: dict[str, float]) -> HealthVerdict:
        """The verdict; flags each finding in `metrics`."""
        if self.health.stop_on_nan and is_nonfinite_update(metrics):
            metrics[NONFINITE_KEY] = 1.0
            return HealthVerdict(HealthStatus.NAN, "a loss or gradient became NaN/Inf")
        self._check_update_size(metrics)
        self._check_reward_terms(metrics)
        return self._check_entropy(metrics)

    def _check_entropy(self, metrics: dict[str, float]) -> HealthVerdict:
        entropy, floor = metrics.get(ENTROPY.metric), self.entropy_floor
        if floor is None or entropy is None or not entropy < floor:
            return HEALTHY
        metrics[COLLAPSE_KEY] = 1.0
        source = (
            f"health.min_entropy {floor:.4g}"
            if self.health.min_entropy is not None
            else f"the floor {floor:.4g} (health.min_entropy_fraction "
            f"{self.health.min_entropy_fraction:g} of the maximum entropy)"
        )
        logger.warning("policy entropy {:.4f} fell below {}", entropy, source)
        return HealthVerdict(HealthStatus.COLLAPSED, f"entropy {entropy:.4g} < {source}")

    def _check_update_size(self, metrics: dict[str, float]) -> None:
        if metrics.get(BC_COEF, 0.0) > 0.0:
            # With a BC term on, the policy's distance from its behaviour policy is mostly the
            # pull toward the teacher, wanted and not a learning rate's fault: the shipped BC
            # specs' KL was 0.26-3.6 with it, <= 0.012 without (docs/training.md, "Health").
            self._high_streak.clear()
            return
        for key, limit, flag, persist in (
            (APPROX_KL.metric, self.health.max_approx_kl, APPROX_KL_HIGH_KEY, 1),
            (
                CLIP_FRAC.metric,
                self.health.max_clip_frac,
                CLIP_FRAC_HIGH_KEY,
                self.health.clip_frac_iterations,
            ),
        ):
            value = metrics.get(key)
            high = limit is not None and value is not None and value > limit
            streak = self._high_streak.get(key, 0) + 1 if high else 0
            self._high_streak[key] = streak
            if streak < persist:
                continue
            metrics[flag] = 1.0
            # At a high learning rate this can hold for a whole run: say it once per streak.
            if (streak - persist) % REPEAT_WARNING_EVERY == 0:
                _warn_update_size(key, value, limit, streak)

    def _check_reward_terms(self, metrics: dict[str, float]) -> None:
        limit = self.health.zero_reward_iterations
        if limit is None:
            return
        for key, value in list(metrics.items()):
            if not key.startswith(REWARD_PREFIX) or not math.isfinite(value):
                continue
            streak = self._zero_streak.get(key, 0) + 1 if value == 0.0 else 0
            self._zero_streak[key] = streak
            if streak >= limit:
                component = key.removeprefix(REWARD_PREFIX)
                metrics[REWARD_ZERO_PREFIX + component] = 1.0
                if streak == limit:
                    logger.warning(
                        "reward component {!r} has been exactly 0 for {} iterations: a weight "
                        "of 0 or an env that never reports it? (health.zero_reward_iterations)",
                        component,
                        limit,
                    )


def _warn_update_size(key: str, value: float, limit: float, streak: int) -> None:
    logger.warning(
        "{} {:.4f} > {} (health){}: updates are too large; try a lower training.lr or fewer "
        "training.num_epochs",
        key,
        value,
        limit,
        f", {streak} iterations in a row" if streak > 1 else "",
    )
