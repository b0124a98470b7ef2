"""Where the benchmarks find the repository and its experiment files."""

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXPERIMENTS = REPO / "experiments"
