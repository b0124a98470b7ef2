"""Published reference points for learning curves: `rlp plot --reference FILE:KEY` and
`benchmarks/learning_rows.py` read them from one small JSON file
(`benchmarks/reference_curves.json`): `{KEY: {"points": [{env_steps, return, low?, high?,
source, url, note?}, ...]}}`, KEY as `<env id>/<algo>` (`Hopper-v5/PPO`). Keys starting with
`_` are comments."""

import json
import math
from dataclasses import dataclass
from pathlib import Path

from rl_platform.base.errors import UserError


@dataclass(frozen=True)
class ReferencePoint:
    env_steps: float
    value: float
    low: float | None
    high: float | None
    source: str
    url: str
    note: str


def _point(raw: object, where: str) -> ReferencePoint:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected an object with env_steps, return, source, url")
    try:
        steps, value = float(raw["env_steps"]), float(raw["return"])
        source, url = str(raw["source"]), str(raw["url"])
    except (KeyError, TypeError, ValueError) as err:
        raise UserError(f"{where}: missing or not a number: {err}") from None
    if not (math.isfinite(steps) and math.isfinite(value)):
        raise UserError(f"{where}: env_steps and return must be finite numbers")
    low, high = raw.get("low"), raw.get("high")
    return ReferencePoint(
        env_steps=steps,
        value=value,
        low=None if low is None else float(low),
        high=None if high is None else float(high),
        source=source,
        url=url,
        note=str(raw.get("note", "")),
    )


def reference_points(path: Path, key: str) -> list[ReferencePoint]:
    """The points under `key` in the file at `path`; UserError naming the keys it has."""
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"--reference {path}: cannot read it: {err}") from None
    entries = {k: v for k, v in data.items() if not k.startswith("_")}
    if key not in entries:
        raise UserError(f"--reference {path}:{key}: no such key; it has {', '.join(entries)}")
    points = entries[key].get("points") if isinstance(entries[key], dict) else None
    if not isinstance(points, list) or not points:
        raise UserError(f"--reference {path}:{key}: expected a non-empty `points` list")
    return [_point(raw, f"{path}:{key} point {i}") for i, raw in enumerate(points)]


def parse_reference(text: str) -> tuple[Path, str]:
    """`FILE:KEY` (the key may contain `/` and `:`-free env ids) -> (FILE, KEY)."""
    path, sep, key = text.partition(".json:")
    if not sep or not key:
        raise UserError(
            f"--reference {text!r}: expected FILE.json:KEY, e.g. "
            "benchmarks/reference_curves.json:Hopper-v5/PPO"
        )
    return Path(path + ".json"), key


def draw_reference(ax: object, points: list[ReferencePoint], *, label: str) -> None:
    """The points as black markers with their published range as error bars."""
    for i, point in enumerate(points):
        below = point.value - point.low if point.low is not None else 0.0
        above = point.high - point.value if point.high is not None else 0.0
        ax.errorbar(  # type: ignore[attr-defined]
            [point.env_steps],
            [point.value],
            yerr=[[below], [above]],
            fmt="D",
            color="black",
            markersize=5,
            capsize=3,
            label=f"published ({label})" if i == 0 else None,
        )
