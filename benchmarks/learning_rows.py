"""A standard-benchmark learning row (issue #50): a spec over seeds, its return at fixed env
steps as IQM and 95% bootstrap interval, beside published reference points.

    python -m benchmarks.learning_rows SPEC --seeds 3 [--set k=v ...] [--steps a,b,c]
        [--out DIR] [--profile P] [--reference KEY]
    python -m benchmarks.learning_rows --report DIR      # re-read DIR, train nothing

Trains through the product: `rlp train SPEC --seeds N --out DIR/runs` in a child process (one
Ray, the seeds as Tune trials; `rl_platform/multi_seed/`; `--seeds 1`: one plain `rlp train`
of the spec's seed, for a quick check). Then reads each seed's metrics.jsonl
with `rlp plot`'s reader and writes into DIR:

    row.json   the row: returns at each step count (IQM, mean, 95% interval, per seed),
               env steps/s and wall time, the machine and its load at the start and the end
    row.md     the same as one markdown table, ready for docs/BENCHMARKS.md
    row.png    each seed's curve, the IQM over seeds and the published points
    meta.json  what ran (the command, the machine): what `--report` re-reads

A row whose training stopped early (the session ended, Ctrl+C) is finished seed by seed with
`rlp train DIR/runs/.../seed_N/spec.yaml --resume DIR/runs/.../seed_N`, then `--report DIR`:
meta.json is written before the training starts.

Each seed's final checkpoint is also played for `--eval-episodes` episodes (default 20; 0: none)
with sampled actions through `rlp eval` (its own observation filter; reset seeds from 1000):
the final return of the policy itself, beside the training curve's last rows.

`--steps` defaults to quarters of the spec's `stop.env_steps`. `--reference` is a key of
`benchmarks/reference_curves.json` (default `<env id>/<algo>`; a missing key draws none).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common.learning_curves import iqm_curve, read_seed_runs, row_at, throughput
from benchmarks.common.output import machine_facts, write_json
from benchmarks.common.paths import REPO
from rl_platform.base.errors import UserError
from rl_platform.evaluation.reference_points import draw_reference, reference_points
from rl_platform.spec import load_spec
from rl_platform.utils.stats import seed_stats

REFERENCES = REPO / "benchmarks" / "reference_curves.json"
META, ROW_JSON, ROW_MD, ROW_PNG, RUNS = "meta.json", "row.json", "row.md", "row.png", "runs"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("spec", nargs="?", type=Path, help="experiment file")
    parser.add_argument("--seeds", type=int, default=3, help="seeds (the spec's seed, +1, ...)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--profile", default=None)
    parser.add_argument("--steps", default=None, help="env step counts, e.g. 250000,500000")
    parser.add_argument("--out", type=Path, default=None, help="output folder")
    parser.add_argument("--reference", default=None, help="key of reference_curves.json")
    parser.add_argument("--report", type=Path, default=None, help="re-read this output folder")
    parser.add_argument(
        "--eval-episodes", type=int, default=20, help="episodes per seed's final checkpoint"
    )
    args = parser.parse_args(argv)
    if (args.spec is None) == (args.report is None):
        parser.error("pass SPEC to run a row, or --report DIR to re-read one (not both)")
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    return args


def parse_steps(text: str | None, *, budget: int | None) -> list[int]:
    """`a,b,c` -> [a, b, c]; None -> quarters of the budget (nothing without one)."""
    if text:
        return sorted({int(float(part)) for part in text.split(",") if part.strip()})
    return [budget * q // 4 for q in (1, 2, 3, 4)] if budget else []


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """What to run, from the spec as `rlp train` will load it."""
    spec = load_spec(args.spec, overrides=args.set, profile=args.profile)
    out = (
        args.out
        or REPO / "runs" / "learning_rows" / f"{spec.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    command = [str(Path(sys.executable).parent / "rlp"), "train", str(args.spec)]
    # One seed is one plain run (`rlp train --seeds` takes 2 or more): the spec's seed.
    command += ["--seeds", str(args.seeds)] if args.seeds > 1 else []
    command += ["--out", str(out / RUNS)]
    command += ["--profile", args.profile] if args.profile else []
    for override in args.set:
        command += ["--set", override]
    return {
        "spec": str(args.spec),
        "name": spec.name,
        "seeds": args.seeds,
        "overrides": list(args.set),
        "profile": args.profile,
        "steps": parse_steps(args.steps, budget=spec.stop.env_steps),
        "reference": args.reference or f"{spec.env.id}/{spec.algo}",
        "command": command,
        "out": str(out),
    }


def run(meta: dict[str, Any]) -> dict[str, Any]:
    """Train the seeds in a child `rlp train --seeds`; the machine before and after."""
    out = Path(meta["out"])
    out.mkdir(parents=True, exist_ok=True)
    meta["machine_start"] = machine_facts()
    # Written now too: a row whose training was stopped can be finished by resuming each seed
    # (`rlp train PARENT/seed_N/spec.yaml --resume PARENT/seed_N`) and read with --report.
    write_json(out / META, {**meta, "exit_code": None})
    started = time.time()
    with open(out / "train_output.txt", "w") as log:
        completed = subprocess.run(meta["command"], stdout=log, stderr=subprocess.STDOUT)
    meta["wall_s"] = time.time() - started
    meta["exit_code"] = completed.returncode
    meta["machine_end"] = machine_facts()
    write_json(out / META, meta)
    return meta


def _points(key: str) -> list[Any]:
    try:
        return reference_points(REFERENCES, key)
    except UserError:  # a row without published points is still a row
        return []


def draw(runs: list[Any], row: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.0, 5.0), dpi=100)
    try:
        for run in runs:
            ax.plot(run.curve.x, run.curve.y, alpha=0.4, linewidth=0.9, label=run.name)
        grid, iqm = iqm_curve(runs)
        if len(grid):
            ax.plot(grid, iqm, color="tab:blue", linewidth=2.2, label=f"IQM over {len(runs)}")
        if points := _points(row["reference"]):
            draw_reference(ax, points, label=row["reference"])
        ax.set(xlabel="env steps", ylabel="episode return (mean of last 100)", title=row["name"])
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
        fig.tight_layout()
        fig.savefig(out)
    finally:
        plt.close(fig)


def _number(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, int | float) else "-"


def markdown(row: dict[str, Any]) -> str:
    """One table: a line per step count, then throughput, machine and load."""
    lines = [
        f"**{row['name']}** (`{' '.join(row['command'][1:])}`)",
        "",
        "| env steps | IQM return | 95% interval (mean) | seeds | per seed |",
        "|---|---|---|---|---|",
    ]
    for entry in row["at_steps"]:
        interval = entry.get("ci95")
        shown = f"[{_number(interval[0])}, {_number(interval[1])}]" if interval else "-"
        per_seed = ", ".join(_number(v) for v in entry.get("values", []))
        lines.append(
            f"| {entry['env_steps']:,.0f} | {_number(entry.get('iqm'))} | {shown} | "
            f"{entry['n']} | {per_seed} |"
        )
    if final := row.get("final_eval"):
        lines.append(_final_line(final))
    start, end = row["machine_start"], row["machine_end"]
    published = "; ".join(
        f"{p['value']:,.0f} at {p['env_steps']:,.0f} ({p['source']}, {p['note']})"
        for p in row["reference_points"]
    )
    lines += [
        "",
        f"env steps/s (median over seeds): {_number(row['env_steps_per_s'])}; wall time "
        f"{_number(row['wall_s'])} s for all seeds; {start['cpu_model']} x {start['cores']}; "
        f"load {start['load_1_5_15']} at the start, {end['load_1_5_15']} at the end.",
        f"Published ({row['reference']}): {published or 'none in reference_curves.json'}.",
    ]
    return "\n".join(lines) + "\n"


EVAL_SEED = 1000
"""The final evaluation's first reset seed: none of the training runs' own."""


def final_return(run: Any, episodes: int) -> float | None:
    """The mean return of `episodes` sampled-action episodes of the seed's latest checkpoint
    (`rlp eval --json`); None where it has no checkpoint or the evaluation fails."""
    command = [str(Path(sys.executable).parent / "rlp"), "eval", f"checkpoint://{run.path}"]
    command += ["-n", str(episodes), "--seed", str(EVAL_SEED), "--sample", "--json"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return float(json.loads(done.stdout)["return_mean"])


def final_eval(runs: list[Any], episodes: int) -> dict[str, Any] | None:
    if episodes < 1:
        return None
    found = {run.name: final_return(run, episodes) for run in runs}
    values = [value for value in found.values() if value is not None]
    stats = seed_stats(values).as_dict() if values else {"n": 0}
    return {"episodes": episodes, "eval_seed": EVAL_SEED, "per_seed": found, **stats}


def _final_line(final: dict[str, Any]) -> str:
    interval = final.get("ci95")
    shown = f"[{_number(interval[0])}, {_number(interval[1])}]" if interval else "-"
    per_seed = ", ".join(_number(v) for v in final["per_seed"].values())
    return (
        f"| final checkpoint, `rlp eval` of {final['episodes']} sampled episodes | "
        f"{_number(final.get('iqm'))} | {shown} | {final['n']} | {per_seed} |"
    )


def report(out: Path, *, eval_episodes: int = 0) -> dict[str, Any]:
    """Read the seeds under `out` and write row.json, row.md and row.png."""
    meta = json.loads((out / META).read_text())
    runs = read_seed_runs(out / RUNS) if (out / RUNS).is_dir() else []
    if not runs:
        raise SystemExit(f"{out / RUNS}: no seed run has logged a return yet")
    row = {
        **meta,
        "at_steps": [row_at(runs, steps) for steps in meta["steps"]],
        "seed_runs": [run.name for run in runs],
        **throughput(runs),
        "reference_points": [vars(p) for p in _points(meta["reference"])],
        "final_eval": final_eval(runs, eval_episodes),
    }
    write_json(out / ROW_JSON, row)
    (out / ROW_MD).write_text(markdown(row))
    draw(runs, row, out / ROW_PNG)
    return row


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.report is not None:
        out = args.report
    else:
        meta = run(plan(args))
        out = Path(meta["out"])
        if meta["exit_code"] != 0:
            print(f"rlp train exited {meta['exit_code']}; see {out / 'train_output.txt'}")
    report(out, eval_episodes=args.eval_episodes)
    sys.stdout.write((out / ROW_MD).read_text() + f"wrote {out}\n")


if __name__ == "__main__":
    main()
