"""Does reading the opponent pay? MLP vs LSTM vs transformer_lstm on the duel (issue #43).

    uv run python -m benchmarks.opponent_encoder_value [--env-steps 6000000] [--games 200]
        [--seeds 0 1 2 3 4] [--hidden-intent counter [shifter]] [--hide hp shield stocks]
        [--teacher scripted://duel/answerer]
        [--history 30] [--history-of opponent] [--mix-pfsp 0] [--opponent-action 1.0]
        [--opponent-action-input features] [--ceiling-games 200] [--quick] [--parallel]
        [--out runs/opponent_encoder_value]

Trains three models with the same env-step budget, on the array runner, in a league whose
opponents are the scripted duel styles in equal shares, from two test sets
(`benchmarks/common/hidden_intent.py`):

* the **hidden-intent set**, where memory is necessary: `counter` (a hidden blind spot per
  game) with its giveaways hidden from the learner (`--hide`, the spec's `env.hide`: both
  players' HP, shield and stocks, which keep what earlier exchanges did; docs/duel.md, "The
  learner's view"), and `shifter` (a hidden plan per game, shown only by how it moves; but a
  memoryless responder that answers every open style, `answerer`, beats all three plans from
  the frame, 0.98: its ceiling leaves memory nothing to add, docs/duel.md; so the default set
  is `counter` alone, and `--hidden-intent counter shifter` adds it);
* the **open styles** `based`, `rusher`, `blocker`, `zoner`, which show who they are in every
  frame. The learner's view is one per run, so it plays them without those features too.

Then plays each trained policy against each style (`--games` games, seats alternating, greedy
and sampled, in the duel's vectorized arena), and against the hidden-intent opponents also per
hidden value (blind spot, plan):

* (a) `mlp` [256, 256]: sees the current frame only;
* (b) `lstm` (cell 128): memory, no opponent-history input;
* (c) `transformer_lstm` with the streaming encoder, CPU-sized (2 layers, 4 heads, d_model 64,
  a 30-frame opponent history, LSTM 128), the whole current frame in its obs path; (b) and
  (c) share the recurrent options (`critic_input: observation`, `lstm_skip`);
* (c0) the same (c) policy with its history cut to the current frame (the encoder's key/value
  cache cleared after every step, the LSTM kept); (c00) with all its memory cut (the LSTM
  state reset too); (b0) the same (b) policy with its LSTM state reset after every step.

Every model starts with the same BC kickstart (`--kickstart-env-steps`, 200k by default,
towards `--teacher`: `answerer`, which beats each open style from the frame, docs/duel.md;
docs/bc.md), so every model starts with the open styles' answers; then each trains with PPO at
its own tuned learning rate (`benchmarks/common/encoder_specs.py`). The budget is 6M env steps
by default (at 2M every model's mean swung by 30-60 points between seeds, docs/modules.md); a
seed of all three takes about 70 minutes on 2 cores. `--parallel` trains and evaluates every
(seed, model) as a Ray task of its own (`benchmarks/common/fan_out.py`, 2 CPUs each), on this
machine or a cluster.

Prints, per seed, one table per test set (a row per policy). Then the answer
(`benchmarks/common/intent_report.py`), greedy and sampled: per policy, the mean over seeds
with a 95% bootstrap interval on the hidden-intent set and on the open styles, next to the
**memoryless ceiling** (the best fixed scripted responder's mean over the hidden values,
`benchmarks/duel_hidden_intent.py`, computed once per `--ceiling-games` and cached in `--out`);
and (c) - (c0), (b) - (b0), (c) - (b) on the hidden-intent set, with issue #43's goals.
`--evaluate-only` re-evaluates the newest runs under `--out` with their own spec.yaml.
`--quick`: one seed, 20k env steps (10k of kickstart), 20 games, a 50-game ceiling: a smoke
run of the whole pipeline, no result. The models are CPU-sized; say so when quoting.
"""

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from benchmarks.common import add_seed_options, seeds_to_run
from benchmarks.common.encoder_specs import KICKSTART_TEACHER, MODELS, TORCH_THREADS, spec_for
from benchmarks.common.fan_out import fan_out
from benchmarks.common.hidden_intent import GIVEAWAYS, HIDDEN_INTENT, OPEN_STYLES, SPLITS
from benchmarks.common.intent_report import print_report
from benchmarks.common.style_arena import CUTS, evaluate, print_table
from benchmarks.duel_hidden_intent import memoryless_bounds, responders
from rl_platform import train
from rl_platform.run.train import train_in_folder
from rl_platform.storage.run_dir import new_run_dir
from rl_platform.storage.saved_spec import read_saved_spec
from rl_platform.utils.atomic import write_json_atomic

QUICK = {"env_steps": 20_000, "kickstart_env_steps": 10_000, "games": 20, "ceiling_games": 50}
CEILING_SEED = 7
"""The seed of docs/duel.md's memoryless-ceiling table."""


def model_rows(model: str, seed: int, args: argparse.Namespace) -> tuple[dict[str, dict], str]:
    """Trains `model` for `seed` (with `--evaluate-only`, finds its newest run under `--out`),
    then evaluates it and its memory cuts (`CUTS`) on both test sets: their rows, and the run
    folder."""
    spec = spec_for(
        model,
        env_steps=args.env_steps,
        seed=seed,
        kickstart_env_steps=args.kickstart_env_steps,
        styles=[*OPEN_STYLES, *args.hidden_intent],
        hide=args.hide,
        teacher=args.teacher,
        mix_pfsp=args.mix_pfsp,
        history=args.history,
        history_of=args.history_of,
        opponent_action=args.opponent_action,
        opponent_action_input=args.opponent_action_input,
    )
    out_dir = args.out / f"seed{seed}"
    if args.evaluate_only:
        run_dir = max((out_dir / spec.name).iterdir())  # the newest run of this model
        spec = read_saved_spec(run_dir)  # as it trained (`--hide` included)
    elif args.parallel:  # in a Ray worker, whose signals are Ray's: `train` would take SIGTERM
        run_dir = new_run_dir(out_dir, spec.name)
        train_in_folder(spec, run_dir, run_key=f"{spec.name}/{run_dir.name}")
    else:
        run_dir = train(spec, out_dir=out_dir).run_dir
    rows = {}
    for row_name, forgets in {model: None, **CUTS.get(model, {})}.items():
        rows[row_name] = evaluate(
            spec, run_dir, games=args.games, forgets=forgets, sets=test_sets(args)
        )
    return rows, str(run_dir)


def test_sets(args: argparse.Namespace) -> dict[str, list[str]]:
    """The hidden-intent set (`--hidden-intent`) and the open styles, by name."""
    return {"hidden_intent": list(args.hidden_intent), "open": list(OPEN_STYLES)}


def print_seed(seed: int, rows: dict[str, dict], args: argparse.Namespace) -> None:
    for set_name, styles in test_sets(args).items():
        print(
            f"\n{set_name} set, seed {seed}: {args.env_steps:,} env steps per model, "
            f"{args.games} games per style and mode, hidden from the learner: {args.hide}"
        )
        print_table(rows, styles, set_name=set_name)


def run_in_order(seeds: Sequence[int], args: argparse.Namespace) -> list[dict]:
    """Every (seed, model) in this process, one after the other; results.json after each seed."""
    rows_by_seed: list[dict] = []
    for seed in seeds:
        rows: dict[str, dict] = {}
        for model in args.models:
            model_and_cuts, run = model_rows(model, seed, args)
            rows |= model_and_cuts
            print(json.dumps({model: rows[model], "run": run}), flush=True)
        print_seed(seed, rows, args)
        rows_by_seed.append(rows)
        write_json_atomic(args.out / "results.json", rows_by_seed)
    return rows_by_seed


def run_in_parallel(seeds: Sequence[int], args: argparse.Namespace) -> list[dict]:
    """`--parallel`: every (seed, model) trains and evaluates as a Ray task of its own
    (`benchmarks.common.fan_out`), as many at once as the Ray in RAY_ADDRESS, or this machine,
    has CPUs for; results.json is rewritten as each ends. A job that failed is reported and
    left out."""
    jobs = {(seed, model): ((model, seed, args), {}) for seed in seeds for model in args.models}
    done: dict[tuple[int, str], dict[str, dict]] = {}
    rows_by_seed: list[dict] = [{} for _ in seeds]
    for (seed, model), outcome in fan_out(model_rows, jobs, num_cpus=TORCH_THREADS):
        if isinstance(outcome, Exception):
            print(json.dumps({model: f"failed: {outcome}", "seed": seed}), flush=True)
            continue
        done[seed, model], run = outcome
        print(json.dumps({model: done[seed, model][model], "seed": seed, "run": run}), flush=True)
        rows_by_seed = [
            {k: v for m in args.models for k, v in done.get((s, m), {}).items()} for s in seeds
        ]
        write_json_atomic(args.out / "results.json", rows_by_seed)
    for seed, rows in zip(seeds, rows_by_seed, strict=True):
        print_seed(seed, rows, args)
    return rows_by_seed


def memoryless_ceilings(out: Path, *, games: int) -> dict[str, float]:
    """The memoryless ceiling against each hidden-intent opponent (docs/duel.md), computed once
    per game count and set of responders (~45 s at 200 games on 2 cores), cached in `out`."""
    cache = out / f"memoryless_ceiling_{games}games_seed{CEILING_SEED}.json"
    names = sorted(responders())
    cached = json.loads(cache.read_text()) if cache.is_file() else {}
    if cached.get("responders") != names:
        bounds = memoryless_bounds(games=games, seed=CEILING_SEED)
        ceilings = {o: {"ceiling": c, "knowing": k} for o, (c, k) in bounds.items()}
        cached = {"responders": names, "opponents": ceilings}
        write_json_atomic(cache, cached)
    return {o: b["ceiling"] for o, b in cached["opponents"].items()}


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    """(c)'s options, as tuned in docs/modules.md."""
    parser.add_argument(
        "--history", type=int, default=MODELS["transformer_lstm"]["history"],
        help="(c)'s opponent-history length in frames (the reference trainer's is 90)",
    )  # fmt: skip
    parser.add_argument(
        "--history-of", choices=("opponent", "frame"), default="opponent",
        help="(c)'s history frames: the opponent's half of the observation or the whole frame",
    )  # fmt: skip
    parser.add_argument(
        "--opponent-action", type=float, default=1.0,
        help="(c)'s weight of the loss that infers the opponent's action (0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--opponent-action-input", choices=("features", "memory"), default="features",
        help="what that loss's head reads: the LSTM's input, or also its output (memory)",
    )  # fmt: skip


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_seed_options(parser, quick_help=", 20k env steps (10k kickstart), 20 games")
    parser.add_argument("--env-steps", type=int, default=6_000_000)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("runs/opponent_encoder_value"))
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument(
        "--hide", nargs="*", default=list(GIVEAWAYS),
        help="features hidden from the learner (env.hide; none: `--hide` alone)",
    )  # fmt: skip
    parser.add_argument(
        "--hidden-intent", nargs="+", choices=list(SPLITS), default=list(HIDDEN_INTENT),
        help="the hidden-intent set, in the league beside the open styles",
    )  # fmt: skip
    parser.add_argument(
        "--teacher", default=KICKSTART_TEACHER, help="the BC kickstart's teacher (a policy URI)"
    )
    parser.add_argument(
        "--kickstart-env-steps", type=int, default=200_000,
        help="env steps of the BC kickstart (0: none, plain PPO from scratch)",
    )  # fmt: skip
    parser.add_argument(
        "--mix-pfsp", type=float, default=0.0,
        help="share of the styles' games handed out by PFSP on main's results (0: equal shares)",
    )  # fmt: skip
    parser.add_argument(
        "--ceiling-games", type=int, default=200,
        help="games from each seat per cell of the memoryless ceiling (cached in --out)",
    )  # fmt: skip
    parser.add_argument(
        "--evaluate-only", action="store_true",
        help="evaluate the newest run of each model under --out instead of training",
    )  # fmt: skip
    parser.add_argument(
        "--parallel", action="store_true",
        help="train and evaluate every (seed, model) as a Ray task of its own, as many at once "
        "as the Ray in RAY_ADDRESS (a cluster) or this machine has CPUs for",
    )  # fmt: skip
    _add_model_options(parser)
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    return args


def main() -> None:
    args = _parse_args()
    args.out = args.out.resolve()  # the same folder for the Ray workers of `--parallel`
    args.out.mkdir(parents=True, exist_ok=True)
    ceilings = memoryless_ceilings(args.out, games=args.ceiling_games)
    run = run_in_parallel if args.parallel else run_in_order
    rows_by_seed = run(seeds_to_run(args), args)
    print_report(rows_by_seed, ceilings={o: ceilings[o] for o in args.hidden_intent})


if __name__ == "__main__":
    main()
