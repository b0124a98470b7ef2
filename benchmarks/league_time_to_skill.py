"""Duel league: env steps and wall time until greedy `main` beats `based` in >= 90% of games.

    uv run python -m benchmarks.league_time_to_skill [--seeds 0 1 2] [--quick]
        [--target 0.9] [--eval-every 100000] [--episodes 200] [--budget 2400000]

Each seed runs `rlp train experiments/duel_vs_based.yaml` as shipped (array runner, 64 games,
sampling in the driver) in a fresh process, with its evaluation every `--eval-every` env steps
(`--episodes` greedy games vs `based` in the vectorized arena, half in each seat) and
`stop.eval: {greedy/win_rate/based: TARGET}`: the run ends at its first evaluation at or above
the target. The result is that evaluation's env steps and the run's training wall time
(`trial_metrics.json`'s `wall_s`, evaluations included, Ray start excluded). Both are reported
as their median, min and max over seeds; the goal (<= 330 s) is met when the median meets it.
`--quick` runs the first seed only.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from benchmarks.common import EXPERIMENTS, add_seed_options, ratio_line, seeds_to_run, write_json
from benchmarks.common.product import QUIET, rlp_train
from rl_platform.storage.evaluation_rows import read_evaluation_rows

SPEC = EXPERIMENTS / "duel_vs_based.yaml"
GOAL_S = 330.0
METRIC = "eval/greedy/win_rate/based"


def run_seed(seed: int, args: argparse.Namespace, out: Path) -> dict:
    """Train one seed to the target (or the budget); its steps and wall time to skill."""
    evaluation = (
        f"evaluation={{every_env_steps: {args.eval_every}, episodes: {args.episodes}, "
        "opponents: [based], modes: [greedy]}"
    )
    overrides = [
        f"seed={seed}",
        evaluation,
        f"stop={{env_steps: {args.budget}, eval: {{greedy/win_rate/based: {args.target}}}}}",
        *QUIET,
    ]
    run_dir = rlp_train(SPEC, out=out, overrides=overrides)
    rows = read_evaluation_rows(run_dir)
    summary = json.loads((run_dir / "trial_metrics.json").read_text())
    reached = [row for row in rows if row.get(METRIC, 0.0) >= args.target]
    return {
        "seed": seed,
        "env_steps": reached[0]["env_steps"] if reached else None,
        "wall_s": summary["wall_s"] if reached else None,
        "curve": [(row["env_steps"], row.get(METRIC)) for row in rows],
        "run_dir": str(run_dir),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_seed_options(parser)
    parser.add_argument("--target", type=float, default=0.9)
    parser.add_argument("--eval-every", type=int, default=100_000)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--budget", type=int, default=2_400_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="league_time_to_skill-"))
    results = []
    for seed in seeds_to_run(args):
        result = run_seed(seed, args, out / f"seed{seed}")
        results.append(result)
        curve = " ".join(f"{steps // 1000}k:{rate:.2f}" for steps, rate in result["curve"])
        sys.stdout.write(
            f"seed {seed}: {result['env_steps']} env steps, {result['wall_s']} s | {curve}\n"
        )
        write_json(out / "results.json", results)
    steps = [r["env_steps"] for r in results]
    sys.stdout.write(ratio_line(f"env steps to {args.target}", steps) + "\n")
    walls = [r["wall_s"] for r in results]
    sys.stdout.write(ratio_line(f"wall s to {args.target}", walls, goal=GOAL_S) + "\n")
    sys.stdout.write(f"results: {out / 'results.json'}\n")


if __name__ == "__main__":
    main()
