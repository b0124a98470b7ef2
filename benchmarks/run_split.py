"""Where a run's time went: steady-state env steps/s and the `perf/*` split of a run folder.

    uv run python -m benchmarks.run_split RUN_DIR [--skip 2]

Reads `metrics.jsonl` (rl_platform/run/phase_clock.py writes the split every iteration) and
prints, over the iterations after the first `--skip` (start-up and CUDA-graph capture):
env steps per second over the summed wall time, the share of each phase, and on CUDA the mean
GPU utilization and the peak GPU memory.
"""

import argparse
import statistics
from pathlib import Path

from rl_platform.storage.metrics_rows import read_metrics

PHASES = ("sample", "learn", "weights_sync", "eval", "checkpoint", "other")


def split_of(rows: list[dict], *, env_steps_before: float) -> dict[str, float]:
    """Summed seconds per phase and iteration, env steps, GPU figures over `rows`;
    `env_steps_before`: the run's env steps when the first of them started."""
    wall = sum(r["perf/iteration_s"] for r in rows)
    steps = rows[-1]["env_steps"] - env_steps_before
    out = {"iterations": len(rows), "env_steps": steps, "wall_s": wall}
    out["env_steps_per_s"] = steps / wall if wall else 0.0
    for phase in PHASES:
        out[f"{phase}_s"] = sum(r.get(f"perf/{phase}_s", 0.0) for r in rows)
    utils = [r["perf/gpu_util"] for r in rows if "perf/gpu_util" in r]
    peaks = [r["perf/gpu_mem_peak_gb"] for r in rows if "perf/gpu_mem_peak_gb" in r]
    if utils:
        out["gpu_util_mean"] = statistics.fmean(utils)
    if peaks:
        out["gpu_mem_peak_gb"] = max(peaks)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--skip", type=int, default=2, help="first iterations left out")
    args = parser.parse_args()
    every = read_metrics(args.run_dir)
    rows = every[args.skip :]
    if not rows:
        raise SystemExit(f"{args.run_dir}: fewer than {args.skip + 1} iterations")
    before = every[args.skip - 1]["env_steps"] if args.skip > 0 else 0.0
    split = split_of(rows, env_steps_before=before)
    print(
        f"{split['iterations']} iterations, {split['env_steps']:,.0f} env steps in "
        f"{split['wall_s']:.1f} s: {split['env_steps_per_s']:,.0f} env steps/s"
    )
    for phase in PHASES:
        seconds = split[f"{phase}_s"]
        print(f"  {phase:<13} {seconds:8.2f} s  {100 * seconds / split['wall_s']:5.1f}%")
    if "gpu_util_mean" in split:
        print(f"  GPU utilization (NVML, mean of iterations): {split['gpu_util_mean']:.0f}%")
    if "gpu_mem_peak_gb" in split:
        print(f"  GPU memory peak (torch, this process): {split['gpu_mem_peak_gb']:.2f} GB")


if __name__ == "__main__":
    main()
