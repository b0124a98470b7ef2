"""How long a run may take to stop after SIGTERM: `RLP_STOP_GRACE_S` (the cluster's stop grace).

Read by the run's signal handler (`run/signals.py`) and forwarded to submitted jobs
(`jobs/runtime_env.py`), so a job's stop and Ray's own SIGKILL agree on the same number.
"""

import math
from collections.abc import Mapping

from rl_platform.base.errors import UserError

STOP_GRACE_ENV_VAR = "RLP_STOP_GRACE_S"
DEFAULT_STOP_GRACE_S = 60.0


def stop_grace_s(environ: Mapping[str, str]) -> float:
    """`RLP_STOP_GRACE_S` in seconds (default 60); `UserError` for anything but a number >= 0."""
    raw = environ.get(STOP_GRACE_ENV_VAR)
    if raw is None or raw == "":
        return DEFAULT_STOP_GRACE_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise UserError(f"{STOP_GRACE_ENV_VAR}={raw!r} must be a number of seconds >= 0")
    return value
