"""Does reading the opponent's history pay? MLP vs LSTM vs transformer_lstm on the duel.

    uv run python -m benchmarks.opponent_encoder_value [--env-steps 6000000] [--games 200]
        [--seeds 0 1 2] [--history 30] [--history-of opponent] [--mix-pfsp 0]
        [--opponent-action 1.0] [--opponent-action-input features] [--quick] [--parallel]
        [--out runs/opponent_encoder_value]

Trains three models with the same env-step budget, on the array runner, in a league whose
opponents are the scripted duel styles in equal shares (`based`, `rusher`, `blocker`,
`zoner`, and `counter`, whose blind spot is hidden per game: docs/duel.md), then plays each
trained policy against each style (`--games` games, seats alternating, greedy and sampled) in
the duel's vectorized arena:

* (a) `mlp` [256, 256]: sees the current frame only;
* (b) `lstm` (cell 128): memory, no opponent-history input;
* (c) `transformer_lstm` with the streaming encoder, CPU-sized (2 layers, 4 heads, d_model 64,
  a 30-frame opponent history, LSTM 128), the whole current frame in its obs path;
  (b) and (c) share the recurrent options: a critic of their own on the observation
  (`critic_input: observation`) and heads that read the LSTM's input beside its output
  (`lstm_skip`), so the memory adds to what the current frame shows;
* (c0) the same (c) policy with its history cut to the current frame: the encoder's key/value
  cache is cleared after every step, the LSTM keeps its state. If (c)'s edge comes from reading
  the opponent's history, (c0) loses it;
* (c00) the same (c) policy with all its memory cut: the cache and the LSTM state are reset
  after every step, so it sees the current frame only. (c0) keeps the LSTM, which reads the
  whole current frame at every step, so it can still remember the opponent; (c00) cannot;
* (b0) the same (b) policy with its memory cut: its LSTM state is reset after every step.

Against `counter` the win rate is also split by its blind spot (`counter_by_blind_spot`): a
policy that reads the history wins in all three kinds of game. Winning in several is no proof
of reading: sampled play tries attacks at random, and the current frame keeps some of the
game's past (both players' HP, shield and stocks), so even a greedy memoryless policy can
switch attacks after being punished (6M MLP: 0.40 / 0.90 / 0.40). Compare with the memory
cuts. `--styles` picks the league mix and the evaluated styles,
`--evaluate-only` re-evaluates the newest trained runs under `--out` with their own
spec.yaml. `--history` sets (c)'s history length (30 frames by default; the reference
trainer's 90 did worse here, docs/modules.md), `--history-of frame` makes each history token
the whole frame instead of the opponent's half, and `--mix-pfsp S` hands a share S of the
styles' games out by PFSP on main's results (`league.mix_pfsp`); both did worse here too.
`--opponent-action W` is (c)'s weight of the loss that infers the opponent's action (`model.
opponent_action`; 1.0 by default, 0 turns it off): with it (c)'s memory read `counter` in
more seeds, and `--opponent-action-input memory` (its head on the LSTM's output too) did
worse in the one seed it ran (docs/modules.md).

The budget is 6M env steps by default, where the baselines have converged: at 2M every
model's mean swung by 30-60 points between seeds, more than the goal, so the comparison
measured where each early learning curve happened to be (docs/modules.md, eighth session).
A seed of all three models takes about 70 minutes on 2 cores (three hours on a slow day).
`--parallel` trains and evaluates every (seed, model) as a Ray task of its own
(`benchmarks/common/fan_out.py`, 2 CPUs each), as many at once as the Ray it joins has CPUs
for: sent to a cluster as a Ray job, five seeds take about as long as one (docs/cluster.md).

All three start with the same BC kickstart towards `based` (`--kickstart-env-steps`, 200k by
default; docs/bc.md), then train with PPO at their own learning rate and value-loss weight
(`per_model_training`). Without the kickstart, at lr 3e-4, neither recurrent model learned
anything in 1M env steps (2026-11-25, docs/modules.md): the comparison measured how fast each
starts to learn, not whether history helps.

Prints, per seed, one row per policy: win rate against each style, greedy and sampled, and
the mean over styles. Then, over seeds (median, min, max): (c)'s edge in that mean over the
better of (a) and (b) (goal, issue #20: >= 10 points, on the median) and its edge over (c0)
(the part that comes from reading the history). Results in docs/modules.md and
docs/BENCHMARKS.md. The models are CPU-sized so a 2-core machine can train them; say so when
quoting. `--quick`: one seed, 20k env steps, 20 games (a smoke run, no result).
"""

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.common import add_seed_options, ratio_line, seeds_to_run
from benchmarks.common.fan_out import fan_out
from benchmarks.common.style_arena import (
    ALL_MEMORY_CUT,
    CUTS,
    HISTORY_CUT,
    MEMORY_CUT,
    evaluate,
    print_table,
)
from rl_platform import train
from rl_platform.run.train import train_in_folder
from rl_platform.spec import ExperimentSpec, load_spec, validate_spec_data
from rl_platform.storage.run_dir import new_run_dir
from rl_platform.utils.atomic import write_json_atomic

STYLES = ("based", "rusher", "blocker", "zoner", "counter")
LR_DECAY_ENV_STEPS = 2_000_000
TORCH_THREADS = 2
"""Each run's torch threads, and the CPUs a `--parallel` job reserves: the array runner samples
in the run's own process (no env runner actors), so a run is one process."""
MODELS: dict[str, dict[str, Any]] = {
    "mlp": {"type": "mlp", "hidden": [256, 256]},
    "lstm": {
        "type": "lstm",
        "lstm_cell_size": 128,
        "actor": [64],
        "critic": [256, 256],
        "critic_input": "observation",
        "lstm_skip": True,
    },
    "transformer_lstm": {
        "type": "transformer_lstm",
        "encoder": "streaming",
        # The whole current frame goes through the obs path, as (a) and (b) see it; the
        # encoder reads the opponent's part over time. So (c0) is (c) minus the history only.
        "obs_split": {"self": [0, 64], "opponent": [32, 64]},
        "history": 30,
        "layers": 2,
        "heads": 4,
        "d_model": 64,
        "obs_encoder": [128],
        "lstm_cell_size": 128,
        "actor": [64],
        "critic": [256, 256],
        "critic_input": "observation",
        "lstm_skip": True,
    },
}


# Per model, as tuned on the duel (2026-11-26, docs/modules.md). Learning rate: the MLP and
# the LSTM learn faster at 1e-3 than at 3e-4 (300k-env-step pilots); the transformer at a
# constant 1e-3 learned to ~1M env steps and then fell apart, at 3e-4 it barely left the
# kickstart, so it decays from 1e-3 to 1e-4 over its first 2M env steps and holds 1e-4 after
# (a decay stretched over a 6M budget kept it near 1e-3 for too long: by 3.2M it had lost its
# early training score of 0.57 against `blocker`, down to 0.10-0.24). Value-loss weight 0.5:
# the recurrent models' critics are their own networks (`critic_input: observation`); with
# the critic on the shared trunk, 0.5 scrambled what the policy learned.
def per_model_training(model: str) -> dict[str, Any]:
    if model in ("mlp", "lstm"):
        return {"lr": 1.0e-3, "vf_loss_coeff": 0.5}
    return {"lr_schedule": [[0, 1.0e-3], [LR_DECAY_ENV_STEPS, 1.0e-4]], "vf_loss_coeff": 0.5}


def kickstart(env_steps: int) -> dict[str, Any]:
    """docs/bc.md's BC+PPO kickstart, the one of experiments/duel_selfplay.yaml: for the
    first `env_steps`, `based` plays half of main's games and main imitates it in all of them,
    the weight falling from 1 to 0; plain PPO afterwards. Every model gets the same one."""
    phase = {
        "teacher": "scripted://duel/based",
        "teacher_led": 0.5,
        "student_led": 0.5,
        "coef": 1.0,
        "env_steps": env_steps,
        "schedule": {"kind": "linear", "until_env_steps": env_steps, "coef": 0.0,
                     "teacher_led": 0.0},
    }  # fmt: skip
    return {"phases": [phase, {}]}


def _league_block(styles: Sequence[str], *, mix_pfsp: float) -> dict[str, Any]:
    """The scripted styles as the league's opponents, in equal shares (PFSP: `mix_pfsp`)."""
    return {
        "opponent_mix": dict.fromkeys(styles, 1.0),
        "scripted": list(styles),
        "mix_pfsp": mix_pfsp,
        # PFSP reads these windows; 100 games per style span ~600k env steps here, too slow to
        # follow a policy that moves within 2M. Without PFSP (and with no snapshots) they only
        # feed the `league/win_rate/` metrics.
        "win_rate_window": 50,
        "slots": 1,
    }


def spec_for(
    model: str,
    *,
    env_steps: int,
    seed: int,
    kickstart_env_steps: int,
    styles: Sequence[str] = STYLES,
    history: int | None = None,
    history_of: str = "opponent",
    mix_pfsp: float = 0.0,
    opponent_action: float = 0.0,
    opponent_action_input: str = "features",
) -> ExperimentSpec:
    """`history`: (c)'s history length, if not `MODELS`'s; `history_of`: what each history
    frame holds, the opponent's half of the observation or the whole frame (both players, so
    an exchange's attack and its answer sit in one token); `mix_pfsp`: the share of the
    styles' games PFSP hands out by main's results (docs/league.md), the rest equal;
    `opponent_action`: (c)'s weight of the policy-inference loss (docs/modules.md), and
    `opponent_action_input` what its head reads."""
    model_spec = dict(MODELS[model])
    if "history" in model_spec:
        model_spec["history"] = history or model_spec["history"]
        model_spec["opponent_action"] = opponent_action
        model_spec["opponent_action_input"] = opponent_action_input
        if history_of == "frame":
            model_spec["obs_split"] = {"self": [0, 64], "opponent": [0, 64]}
    bc = {"bc": kickstart(kickstart_env_steps)} if kickstart_env_steps else {}
    league = _league_block(styles, mix_pfsp=mix_pfsp)
    return validate_spec_data(
        {
            "name": f"encoder_value_{model}",
            "algo": "PPO",
            "seed": seed,
            "env": {"id": "rlp/Duel-v0", "envs_per_runner": 64, "runner": "vector"},
            "training": {
                **per_model_training(model),
                "gamma": 0.995,
                "lambda": 0.95,
                "train_batch_size": 4096,
                "minibatch_size": 1024,
                "num_epochs": 4,
                # No entropy bonus: the MLP learns more without (0.44 -> 0.68 greedy mean).
                "entropy_coeff": 0.0,
                "grad_clip": 1.0,
            },
            "model": model_spec,
            "league": league,
            "resources": {"torch_threads": TORCH_THREADS},
            "stop": {"env_steps": env_steps},
            "checkpoint": {"every_iterations": None, "keep_last": 1},
            "logging": {"wandb": "off", "tensorboard": False},
            **bc,
        }
    )


def model_rows(
    model: str, seed: int, args: argparse.Namespace, *, env_steps: int, games: int
) -> tuple[dict[str, dict], str]:
    """Trains `model` for `seed` (with `--evaluate-only`, finds its newest run under `--out`),
    then evaluates it and its memory cuts (`CUTS`): their rows, and the run folder."""
    spec = spec_for(
        model,
        env_steps=env_steps,
        seed=seed,
        kickstart_env_steps=args.kickstart_env_steps,
        styles=args.styles,
        history=args.history,
        history_of=args.history_of,
        mix_pfsp=args.mix_pfsp,
        opponent_action=args.opponent_action,
        opponent_action_input=args.opponent_action_input,
    )
    out_dir = args.out / f"seed{seed}"
    if args.evaluate_only:
        run_dir = max((out_dir / spec.name).iterdir())  # the newest run of this model
        spec = load_spec(run_dir / "spec.yaml")  # as it trained (`--history` included)
    elif args.parallel:  # in a Ray worker, whose signals are Ray's: `train` would take SIGTERM
        run_dir = new_run_dir(out_dir, spec.name)
        train_in_folder(spec, run_dir, run_key=f"{spec.name}/{run_dir.name}")
    else:
        run_dir = train(spec, out_dir=out_dir).run_dir
    rows = {model: evaluate(spec, run_dir, games=games, forgets=None, styles=args.styles)}
    for row_name, forgets in CUTS.get(model, {}).items():
        rows[row_name] = evaluate(spec, run_dir, games=games, forgets=forgets, styles=args.styles)
    return rows, str(run_dir)


def print_seed(
    seed: int, rows: dict[str, dict], styles: Sequence[str], *, env_steps: int, games: int
) -> None:
    print(f"\n{env_steps:,} env steps per model, {games} games per style and mode, seed {seed}")
    print_table(rows, styles)


def run_seed(seed: int, args: argparse.Namespace, *, env_steps: int, games: int) -> dict:
    rows: dict[str, dict] = {}
    for model in args.models:
        model_and_cuts, run = model_rows(model, seed, args, env_steps=env_steps, games=games)
        rows |= model_and_cuts
        print(json.dumps({model: rows[model], "run": run}), flush=True)
    print_seed(seed, rows, args.styles, env_steps=env_steps, games=games)
    return rows


def run_in_parallel(
    seeds: Sequence[int], args: argparse.Namespace, *, env_steps: int, games: int
) -> list[dict]:
    """`--parallel`: every (seed, model) trains and evaluates as a Ray task of its own
    (`benchmarks.common.fan_out`), as many at once as the Ray in RAY_ADDRESS, or this machine,
    has CPUs for; results.json is rewritten as each ends. A job that failed is reported and
    left out."""
    jobs = {
        (seed, model): ((model, seed, args), {"env_steps": env_steps, "games": games})
        for seed in seeds
        for model in args.models
    }
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
        print_seed(seed, rows, args.styles, env_steps=env_steps, games=games)
    return rows_by_seed


def edges(rows_by_seed: list[dict[str, dict]], mode: str) -> tuple[list, list, list]:
    """Per seed: (c)'s mean win rate minus the better baseline's, minus (c0)'s and minus
    (c00)'s."""
    over_baselines, over_cut, over_all_cut = [], [], []
    for rows in rows_by_seed:
        if "transformer_lstm" not in rows:
            continue
        ours = rows["transformer_lstm"][f"{mode}/mean"]
        baselines = [rows[m][f"{mode}/mean"] for m in ("mlp", "lstm") if m in rows]
        if baselines:
            over_baselines.append(ours - max(baselines))
        over_cut.append(ours - rows[HISTORY_CUT][f"{mode}/mean"])
        if ALL_MEMORY_CUT in rows:  # runs before it existed lack the row
            over_all_cut.append(ours - rows[ALL_MEMORY_CUT][f"{mode}/mean"])
    return over_baselines, over_cut, over_all_cut


def memory_edges(rows_by_seed: list[dict[str, dict]], mode: str) -> list[float]:
    """Per seed: (b)'s mean win rate minus (b0)'s, what the LSTM's memory is worth."""
    return [
        rows["lstm"][f"{mode}/mean"] - rows[MEMORY_CUT][f"{mode}/mean"]
        for rows in rows_by_seed
        if "lstm" in rows
    ]


def _parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_seed_options(parser, quick_help=", 20k env steps, 20 games")
    parser.add_argument("--env-steps", type=int, default=6_000_000)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("runs/opponent_encoder_value"))
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    parser.add_argument(
        "--styles", nargs="+", default=list(STYLES),
        help="the scripted styles of the league mix (equal shares) and of the evaluation",
    )  # fmt: skip
    parser.add_argument(
        "--evaluate-only", action="store_true",
        help="evaluate the newest run of each model under --out instead of training",
    )  # fmt: skip
    parser.add_argument(
        "--history", type=int, default=MODELS["transformer_lstm"]["history"],
        help="(c)'s opponent-history length in frames (the reference trainer's is 90)",
    )  # fmt: skip
    parser.add_argument(
        "--history-of", choices=("opponent", "frame"), default="opponent",
        help="(c)'s history frames: the opponent's half of the observation or the whole frame",
    )  # fmt: skip
    parser.add_argument(
        "--mix-pfsp", type=float, default=0.0,
        help="share of the styles' games handed out by PFSP on main's results (0: equal fifths)",
    )  # fmt: skip
    parser.add_argument(
        "--opponent-action", type=float, default=1.0,
        help="(c)'s weight of the loss that infers the opponent's action (0: none)",
    )  # fmt: skip
    parser.add_argument(
        "--opponent-action-input", choices=("features", "memory"), default="features",
        help="what that loss's head reads: the LSTM's input, or also its output (memory)",
    )  # fmt: skip
    parser.add_argument(
        "--kickstart-env-steps", type=int, default=200_000,
        help="env steps of the BC kickstart towards `based` (0: none, plain PPO from scratch)",
    )  # fmt: skip
    parser.add_argument(
        "--parallel", action="store_true",
        help="train and evaluate every (seed, model) as a Ray task of its own, as many at once "
        "as the Ray in RAY_ADDRESS (a cluster) or this machine has CPUs for",
    )  # fmt: skip
    return parser.parse_args()


def _print_edges(rows_by_seed: list[dict[str, dict]]) -> None:
    """Each edge the benchmark measures, greedy and sampled, over the seeds."""
    print()
    for mode in ("greedy", "sampled"):
        over_baselines, over_cut, over_all_cut = edges(rows_by_seed, mode)
        print(
            ratio_line(f"{mode}: (c) - best of (a), (b)", over_baselines, goal=0.10, at_most=False)
        )
        print(ratio_line(f"{mode}: (c) - (c0) history cut", over_cut))
        print(ratio_line(f"{mode}: (c) - (c00) all memory cut", over_all_cut))
        print(ratio_line(f"{mode}: (b) - (b0) memory cut", memory_edges(rows_by_seed, mode)))


def main() -> None:
    args = _parse_args()
    args.out = args.out.resolve()  # the same folder for the Ray workers of `--parallel`
    args.out.mkdir(parents=True, exist_ok=True)
    env_steps, games = (20_000, 20) if args.quick else (args.env_steps, args.games)
    if args.parallel:
        rows_by_seed = run_in_parallel(seeds_to_run(args), args, env_steps=env_steps, games=games)
    else:
        rows_by_seed = []
        for seed in seeds_to_run(args):
            rows_by_seed.append(run_seed(seed, args, env_steps=env_steps, games=games))
            write_json_atomic(args.out / "results.json", rows_by_seed)
    _print_edges(rows_by_seed)


if __name__ == "__main__":
    main()
