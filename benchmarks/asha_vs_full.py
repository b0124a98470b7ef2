"""ASHA (or synchronous halving) vs running every configuration to the end, on the same
sampled configurations.

Samples N configurations once from `experiments/search/cartpole_ppo_asha.yaml`'s search space,
then runs them (a) under the early-stopping scheduler (`--scheduler`: `asha`, the default, or
`halving`) and (b) each to max_t (FIFO scheduler), both through
`rl_platform.search.run_search` with the configurations pinned (`points`). Prints the env steps
each arm used, the best final return of each, and the ratios. Goal: the early-stopping arm's
best within 5% of the full arm's best at <= 0.4x the env steps. Beside the final returns, the
settled ones (mean of a trial's last 5 reports, `SETTLED_REPORTS`) of the configuration the
early-stopping arm picked: in its own arm and in the full arm.

    uv run python -m benchmarks.asha_vs_full [--scheduler asha|halving] [--seeds 0 1 2]
        [--quick] [--samples 8] [--num-cpus 2] [--out DIR]

Each seed samples its own N configurations (and seeds the trials); both ratios are reported as
their median, min and max over seeds, and a goal is met when the median meets it.
`--quick` runs the first seed only and shrinks each trial (stop.env_steps=15000,
train_batch_size=500) for a few minutes' run.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import EXPERIMENTS, add_seed_options, ratio_line, seeds_to_run, write_json

SPEC = EXPERIMENTS / "search" / "cartpole_ppo_asha.yaml"
QUICK = ["stop.env_steps=15000", "training.train_batch_size=500"]
SETTLED_REPORTS = 5
"""A trial's settled return: the mean of its last 5 reports (5k env steps). CartPole's return
swings by 100-300 between neighbouring iterations at these learning rates, so one final value
is mostly luck, and a trial resumed from a rung checkpoint (halving) lives through other luck
than the same configuration run straight through (its env copies restart their episodes)."""


def _settled(search_dir: Path, trial_id: str, metric: str) -> float | None:
    from rl_platform.search.folder import trial_folder, trial_results

    rows = trial_results(trial_folder(search_dir, trial_id))
    values = [r[metric] for r in rows if isinstance(r.get(metric), (int, float))]
    values = [v for v in values if v == v][-SETTLED_REPORTS:]  # NaN: no episode ended yet
    return sum(values) / len(values) if values else None


def _arm(spec: Any, scheduler: str, points: list[dict[str, Any]], out: Path, num_cpus: int) -> dict:
    from rl_platform.search.results import pick_best
    from rl_platform.search.tuner import run_search
    from rl_platform.spec import validate_spec_data

    data = spec.dump()
    data["search"]["scheduler"]["type"] = scheduler
    data["search"]["num_samples"] = len(points)
    if scheduler == "halving":
        # halving refuses a cap on running trials (paused ones would hold it); with
        # --num-cpus 2 and one CPU per trial, 2 run at a time, as the spec's cap of 2 allows
        data["search"]["max_concurrent"] = None
    arm_spec = validate_spec_data(data, source=f"{scheduler} arm")
    started = time.time()
    outcome = run_search(arm_spec, out_dir=out / scheduler, points=points, num_cpus=num_cpus)
    best = pick_best(outcome.rows, mode=arm_spec.search.scheduler.mode)
    by_config = {json.dumps(row.params, sort_keys=True): row for row in outcome.rows}
    metric = arm_spec.search.scheduler.metric
    settled = {
        json.dumps(row.params, sort_keys=True): _settled(outcome.search_dir, row.trial_id, metric)
        for row in outcome.rows
    }
    return {
        "settled": [settled.get(json.dumps(p, sort_keys=True)) for p in points],
        "wall_s": time.time() - started,
        "env_steps": sum(row.env_steps for row in outcome.rows),
        "best_return": best.metric if best else None,
        "best_params": best.params if best else None,
        "rows": [by_config.get(json.dumps(p, sort_keys=True)) for p in points],
        "search_dir": str(outcome.search_dir),
    }


def _fmt(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator is not None and denominator else None


def _settled_ratios(points: list[dict], early: dict, full: dict) -> dict[str, float | None]:
    """The pick of the early-stopping arm (its best final return), settled: in its own arm
    (`settled_ratio`) and in the full arm, where it ran straight through (`pick_ratio`: how
    good a configuration the search chose, whatever luck its own run had); each over the full
    arm's best settled return."""
    full_best = max((v for v in full["settled"] if v is not None), default=None)
    if early["best_params"] not in points:
        return {"settled_ratio": None, "pick_ratio": None}
    pick = points.index(early["best_params"])
    return {
        "settled_ratio": _ratio(early["settled"][pick], full_best),
        "pick_ratio": _ratio(full["settled"][pick], full_best),
    }


def _report(points: list[dict], early: dict, full: dict, *, max_t: int, name: str) -> dict:
    """`early`: the early-stopping arm, whose scheduler `name` labels its columns and keys."""
    lines = [
        f"{'#':>2} {name + ' status':>15} {name + ' steps':>13} {name + ' ret':>12} "
        f"{'full ret':>9}  config"
    ]
    for index, (params, e_row, f_row) in enumerate(
        zip(points, early["rows"], full["rows"], strict=True)
    ):
        shown = ", ".join(f"{k.split('.')[-1]}={_fmt(v)}" for k, v in params.items())
        status, steps = (e_row.status, e_row.env_steps) if e_row else ("-", 0)
        e_ret = _fmt(e_row.metric) if e_row else "-"
        f_ret = _fmt(f_row.metric) if f_row else "-"
        lines.append(f"{index:>2} {status:>15} {steps:>13} {e_ret:>12} {f_ret:>9}  {shown}")
    summary = {
        "max_t": max_t,
        f"{name}_env_steps": early["env_steps"],
        "full_env_steps": full["env_steps"],
        "env_steps_ratio": early["env_steps"] / full["env_steps"] if full["env_steps"] else None,
        f"{name}_best_return": early["best_return"],
        "full_best_return": full["best_return"],
        "best_return_ratio": (
            early["best_return"] / full["best_return"]
            if early["best_return"] is not None and full["best_return"]
            else None
        ),
        f"{name}_wall_s": round(early["wall_s"], 1),
        "full_wall_s": round(full["wall_s"], 1),
    } | _settled_ratios(points, early, full)
    lines.append("")
    lines += [f"{key:>21}: {_fmt(value)}" for key, value in summary.items()]
    sys.stdout.write("\n".join(lines) + "\n")
    return summary


def run_seed(seed: int, args: argparse.Namespace, out: Path) -> dict:
    """Both arms on the configurations this seed samples; the seed's summary."""
    from rl_platform.search.budget import trial_budget
    from rl_platform.search.space import sample_configs
    from rl_platform.spec import load_spec

    overrides = ["logging.wandb=off", f"seed={seed}", *(QUICK if args.quick else [])]
    spec = load_spec(SPEC, overrides=overrides)
    assert spec.search is not None
    points = sample_configs(spec.search.params, num=args.samples, seed=seed)
    out = out / f"seed{seed}"
    name = args.scheduler
    early = _arm(spec, name, points, out, args.num_cpus)
    full = _arm(spec, "fifo", points, out, args.num_cpus)
    budget = trial_budget(spec)
    sys.stdout.write(f"\nseed {seed}\n")
    summary = _report(points, early, full, max_t=budget.max_t, name=name)
    summary |= {"grace_period": budget.grace_period, "reduction_factor": budget.reduction_factor}
    cap = None if name == "halving" else spec.search.max_concurrent  # as `_arm` ran it
    summary |= {"scheduler": name, "max_concurrent": cap, "seed": seed}
    summary |= {"quick": args.quick, "samples": args.samples, f"{name}_dir": early["search_dir"]}
    summary |= {"full_dir": full["search_dir"], "best_params": early["best_params"]}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_seed_options(parser, quick_help=", and a small per-trial budget")
    parser.add_argument(
        "--scheduler",
        choices=("asha", "halving"),
        default="asha",
        help="the early-stopping arm: Tune's ASHA or synchronous successive halving",
    )
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--num-cpus", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    out = args.out or Path(tempfile.mkdtemp(prefix=f"{args.scheduler}_vs_full-"))
    summaries = []
    for seed in seeds_to_run(args):
        summaries.append(run_seed(seed, args, out))
        write_json(out / "summary.json", summaries)
    steps = [s["env_steps_ratio"] for s in summaries]
    name = args.scheduler
    sys.stdout.write("\n" + ratio_line(f"env steps {name} / full", steps, goal=0.4) + "\n")
    for key, label in (
        ("best_return_ratio", "best final return"),
        ("settled_ratio", "pick's settled return (own arm)"),
        ("pick_ratio", "pick's settled return (full arm)"),
    ):
        values = [s[key] for s in summaries]
        line = ratio_line(f"{label} {name} / full", values, goal=0.95, at_most=False)
        sys.stdout.write(line + "\n")
    sys.stdout.write(f"summary: {out / 'summary.json'}\n")


if __name__ == "__main__":
    main()
