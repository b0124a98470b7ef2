"""How values read in `rlp`'s lines and tables: floats to 4 significant digits, a dash for
nothing, a duration in its two largest units (`4m07s`, `3h02m`, `11d04h`)."""

import math
from typing import Any


def shown(value: Any) -> str:
    """`0.0005637` for a float, `-` for None, `str()` of anything else."""
    if value is None:
        return "-"
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def duration_text(seconds: float | None) -> str:
    """`4m07s`, `3h02m`, `11d04h`; `?` when unknown."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d{hours:02d}h"
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def rate_text(per_second: float) -> str:
    """`4,328` at 10 or more a second, `0.44` below it: a duel's games end about one a second,
    and `0 games/s` would hide that they end at all."""
    return f"{per_second:,.0f}" if per_second >= 10 else f"{per_second:.2g}"
