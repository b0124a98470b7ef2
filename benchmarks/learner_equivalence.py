"""Learning per env step: the array learner against RLlib's learner path, seed by seed.

    uv run python -m benchmarks.learner_equivalence [--spec duel_vs_based] [--seeds 3 4 5]
        [--budget 600000] [--eval-every 200000] [--episodes 100] [--overlap] [--out DIR]
        [--set KEY=VALUE ...]

Each seed trains the spec twice in fresh processes (`rlp train`), once with
`training.learner: rllib` (episodes through RLlib's learner connectors) and once with
`training.learner: array` (rl_platform/learners/array_ppo.py), evaluating greedy and sampled
play against `based` every `--eval-every` env steps; `--overlap` adds a third arm, the array
learner with `resources.overlap: true`. For each evaluation point and mode the script prints
every arm's median, min and max over the seeds, and calls the arms equal within the spread
when each arm's median lies inside the other arm's [min, max]. The seeds default to 3 4 5:
no setting of the specs was chosen on them. Env steps/s (the run's own `env_steps_per_s`) are
reported beside, as the speed the arms learned at on the same machine.
"""

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from benchmarks.common import EXPERIMENTS, machine_line, write_json
from benchmarks.common.product import QUIET, rlp_train
from rl_platform.storage.evaluation_rows import read_evaluation_rows

MODES = ("greedy", "sampled")
ARMS = {"rllib": ["training.learner=rllib"], "array": ["training.learner=array"]}
OVERLAP_ARM = {"array_overlap": ["training.learner=array", "resources.overlap=true"]}


def run_arm(spec: Path, seed: int, settings: list[str], args: argparse.Namespace, out: Path):
    """One training run; its evaluation curve per mode and its env steps/s."""
    evaluation = (
        f"evaluation={{every_env_steps: {args.eval_every}, episodes: {args.episodes}, "
        f"opponents: [based], modes: [{', '.join(MODES)}]}}"
    )
    overrides = [f"seed={seed}", evaluation, f"stop={{env_steps: {args.budget}}}"]
    run_dir = rlp_train(
        spec,
        out=out,
        overrides=[*overrides, *args.set, *settings, *QUIET],
        profile=args.profile,
    )
    rows = read_evaluation_rows(run_dir)
    summary = json.loads((run_dir / "trial_metrics.json").read_text())
    curve = {
        mode: {row["env_steps"]: row.get(f"eval/{mode}/win_rate/based") for row in rows}
        for mode in MODES
    }
    return {"curve": curve, "env_steps_per_s": summary.get("env_steps_per_s")}


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def compare(results: dict[str, list[dict]]) -> list[dict]:
    """Per evaluation point and mode: each arm's spread and, per arm, whether it agrees with
    RLlib's path (each median inside the other's range)."""
    rows = []
    first = next(iter(results.values()))
    for mode in MODES:
        for steps in sorted(first[0]["curve"][mode]):
            arms = {
                arm: spread([r["curve"][mode][steps] for r in runs if steps in r["curve"][mode]])
                for arm, runs in results.items()
            }
            base = arms["rllib"]
            equal = {
                name: base["min"] <= other["median"] <= base["max"]
                and other["min"] <= base["median"] <= other["max"]
                for name, other in arms.items()
                if name != "rllib"
            }
            rows.append({"mode": mode, "env_steps": steps, "arms": arms, "equal": equal})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="duel_vs_based")
    parser.add_argument("--seeds", type=int, nargs="+", default=[3, 4, 5])
    parser.add_argument("--budget", type=int, default=600_000)
    parser.add_argument("--eval-every", type=int, default=200_000)
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--overlap", action="store_true")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        help="a spec override for every arm, e.g. resources.torch_threads=1 beside a long run",
    )
    parser.add_argument("--report", type=Path, default=None, help="print a results.json again")
    args = parser.parse_args()
    if args.report is not None:
        saved = json.loads(args.report.read_text())
        for runs in (v for k, v in saved.items() if k != "args"):
            for run in runs:  # JSON keys are strings: the env steps again as numbers
                run["curve"] = {
                    m: {int(k): v for k, v in c.items()} for m, c in run["curve"].items()
                }
        report({arm: runs for arm, runs in saved.items() if arm != "args"})
        return
    spec = EXPERIMENTS / f"{args.spec}.yaml"
    out = args.out or Path(tempfile.mkdtemp(prefix="learner_equivalence-"))
    arms = ARMS | (OVERLAP_ARM if args.overlap else {})
    results: dict[str, list[dict]] = {arm: [] for arm in arms}
    print(machine_line())
    for seed in args.seeds:
        for arm, settings in arms.items():
            run = run_arm(spec, seed, settings, args, out / f"{arm}_seed{seed}")
            results[arm].append(run)
            print(f"seed {seed} {arm}: {run['curve']} | {run['env_steps_per_s']} env steps/s")
            write_json(out / "results.json", {"args": vars(args) | {"out": None}, **results})
    report(results)
    print(f"results: {out / 'results.json'}")


def report(results: dict[str, list[dict]]) -> None:
    for row in compare(results):
        cells = " | ".join(
            f"{arm} {s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"
            for arm, s in row["arms"].items()
        )
        verdicts = ", ".join(
            f"{arm} {'equal within the spread' if same else 'NOT within the spread'}"
            for arm, same in row["equal"].items()
        )
        print(f"{row['mode']} @ {row['env_steps']:,}: {cells}: {verdicts}")
    for arm, runs in results.items():
        speeds = [r["env_steps_per_s"] for r in runs]
        print(f"{arm}: env steps/s {spread(speeds)}")


if __name__ == "__main__":
    main()
