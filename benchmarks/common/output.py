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


def cpu_model() -> str:
    """The CPU's model name (Linux /proc/cpuinfo), else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_facts() -> dict[str, Any]:
    """The machine as data, for a result file: CPU model, cores, load averages now."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "node": platform.node(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "load_1_5_15": [round(value, 2) for value in load],
        "python": platform.python_version(),
    }


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
