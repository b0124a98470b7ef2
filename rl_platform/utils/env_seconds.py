"""A duration a user sets through an environment variable (`RLP_*_S`), checked (no Ray)."""

import math
import os
from collections.abc import Mapping

from rl_platform.base.errors import UserError


def seconds_from_env(name: str, default: float, environ: Mapping[str, str] | None = None) -> float:
    """`name`'s value in seconds (a finite number > 0), or `default` when unset or blank; any
    other value is a `UserError` naming the variable, the value and the default."""
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UserError(f"{name}={raw!r}: not a number of seconds > 0 (default {default:g})")
    return value
