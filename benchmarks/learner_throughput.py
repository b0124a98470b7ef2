"""The array learner against RLlib's learner path: env steps/s and learner seconds per iteration.

    uv run python -m benchmarks.learner_throughput [--spec duel_selfplay_transformer]
        [--profile test] [--iterations 4] [--rounds 2] [--out results.json]

Each round trains the spec with `training.learner: rllib`, then with `training.learner: array`
(or the other way round in odd rounds, so a drift of the machine's speed does not favour one
side), each in a fresh `rlp train` process for `--iterations` iterations without evaluation.
From each run's metrics.jsonl, the iterations after the first (start-up) give env steps/s and
the `perf/*` split (rl_platform/run/phase_clock.py). Reported: per arm, the median over its
runs of env steps/s and learner seconds per iteration, and the ratios array / rllib per round
(median, min, max).
"""

import argparse
import statistics
import tempfile
from pathlib import Path

from benchmarks.common import EXPERIMENTS, machine_line, ratio_line, write_json
from benchmarks.common.product import QUIET, rlp_train
from rl_platform.storage.metrics_rows import read_metrics

ARMS = ("rllib", "array")


def run_arm(args: argparse.Namespace, learner: str, out: Path) -> dict[str, float]:
    overrides = [
        f"training.learner={learner}",
        f"stop={{iterations: {args.iterations}}}",
        "~evaluation",
        "checkpoint.every_env_steps=100000000",
        *QUIET,
    ]
    run_dir = rlp_train(
        EXPERIMENTS / f"{args.spec}.yaml", out=out, overrides=overrides, profile=args.profile
    )
    rows = read_metrics(run_dir)
    steady = rows[1:]
    wall = sum(r["perf/iteration_s"] for r in steady)
    steps = steady[-1]["env_steps"] - rows[0]["env_steps"]
    return {
        "env_steps_per_s": steps / wall,
        "learn_s": statistics.mean(r["perf/learn_s"] for r in steady),
        "sample_s": statistics.mean(r["perf/sample_s"] for r in steady),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="duel_selfplay_transformer")
    parser.add_argument("--profile", default="test")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    print(machine_line())
    work = Path(tempfile.mkdtemp(prefix="learner_throughput-"))
    runs: dict[str, list[dict]] = {arm: [] for arm in ARMS}
    for round_index in range(args.rounds):
        order = ARMS if round_index % 2 == 0 else ARMS[::-1]
        for arm in order:
            result = run_arm(args, arm, work / f"{arm}_{round_index}")
            runs[arm].append(result)
            print(
                f"round {round_index} {arm}: "
                + ", ".join(f"{k} {v:,.2f}" for k, v in result.items())
            )
    for key in ("env_steps_per_s", "learn_s"):
        ratios = [a[key] / r[key] for a, r in zip(runs["array"], runs["rllib"], strict=True)]
        print(ratio_line(f"{key} array/rllib", ratios, unit="rounds"))
    for arm, results in runs.items():
        rate = statistics.median(r["env_steps_per_s"] for r in results)
        learn = statistics.median(r["learn_s"] for r in results)
        print(f"{arm}: env steps/s median {rate:,.0f}, learn s/iteration median {learn:.2f}")
    if args.out is not None:
        write_json(
            args.out, {"machine": machine_line(), "args": vars(args) | {"out": None}, **runs}
        )


if __name__ == "__main__":
    main()
