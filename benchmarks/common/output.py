"""What every benchmark prints or writes beside its numbers: the machine it ran on, its
results as JSON, and timings of contenders taken side by side."""

import json
import os
import platform
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any


def machine_line() -> str:
    """The machine, its cores and its load when the numbers were taken: timings from a shared
    or busy machine are quoted with it (docs/BENCHMARKS.md)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, Python {platform.python_version()}"
    )


def write_json(path: Path, payload: Any) -> None:
    """`payload` as indented JSON (anything JSON lacks as its `str`), ending in a newline."""
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")


def side_by_side(contenders: Mapping[str, Callable[[], object]], *, repeats: int) -> dict:
    """Seconds of each contender's call per repeat, the contenders alternating within every
    repeat, so a drift in the machine's speed hits each of them alike."""
    seconds: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeats):
        for name, call in contenders.items():
            started = time.perf_counter()
            call()
            seconds[name].append(time.perf_counter() - started)
    return seconds
