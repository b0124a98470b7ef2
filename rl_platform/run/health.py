"""The health verdict on one iteration's metrics (pure): a NaN/Inf update, entropy collapse.

One verdict for `rlp train` and search trials; the training loop decides what each host does
with it (a trial stops on collapse, `rlp train` warns and goes on).
"""

from dataclasses import dataclass
from enum import StrEnum

from loguru import logger

from rl_platform.run.metrics import is_nonfinite_update
from rl_platform.spec.sections import HealthSpec

NONFINITE_KEY = "health/nonfinite"
COLLAPSE_KEY = "health/entropy_collapse"


class HealthStatus(StrEnum):
    OK = "ok"
    COLLAPSED = "collapsed"
    NAN = "nan"


@dataclass(frozen=True)
class HealthVerdict:
    status: HealthStatus
    reason: str = ""


HEALTHY = HealthVerdict(HealthStatus.OK)


def check_health(metrics: dict[str, float], health: HealthSpec) -> HealthVerdict:
    """The verdict; flags the problem in `metrics` (`health/...` = 1.0) so every sink sees it."""
    if health.stop_on_nan and is_nonfinite_update(metrics):
        metrics[NONFINITE_KEY] = 1.0
        return HealthVerdict(HealthStatus.NAN, "a loss or gradient became NaN/Inf")
    entropy, floor = metrics.get("train/entropy"), health.min_entropy
    if floor is not None and entropy is not None and entropy < floor:
        metrics[COLLAPSE_KEY] = 1.0
        logger.warning("policy entropy {:.4f} fell below health.min_entropy={}", entropy, floor)
        return HealthVerdict(
            HealthStatus.COLLAPSED, f"entropy {entropy:.4g} < health.min_entropy {floor}"
        )
    return HEALTHY
