"""Env steps to an 80% win rate against `based` on the duel: BC + PPO vs pure PPO, over seeds.

    uv run python -m benchmarks.bc_ppo_speedup [--seeds 0 1 2] [--quick] [--budget 2000000]
        [--target 0.8] [--window 3] [--eval-every 1] [--eval-games 200] [--set k=v ...]

Both runs of a seed use experiments/duel_bc_ppo.yaml (main vs `based` through a league) with
that seed and the same env-step budget; the PPO run drops its `bc:` block. After every
`--eval-every` iterations the current policy (greedy, or sampled with `--sample`) plays
`--eval-games` games against `based` in the duel's arena as `rlp eval --seat alternate` plays
them (benchmarks/common/arena.py; draws count 1/2). Each run trains through `rl_platform.train`,
the loop and callbacks of `rlp train` (its run folder under a temporary directory), and the
evaluation runs in its `on_iteration` hook.

The result of a run is the env step count of the first evaluation from which the mean win rate
of `--window` consecutive evaluations reaches `--target` (a confirmation window: one lucky
evaluation does not count; `--window 1` is the plain first crossing, also reported). A run
stops once its window is complete or at `--budget`. The ratio BC+PPO / PPO is reported per seed
and as its median, min and max over seeds; the goal (<= 0.25) is met when the median meets it.
Prints a table and writes everything as JSON to `--out`.

The BC + PPO run replays aggregated teacher labels (`bc.replay` in the spec): while the BC
weight is above 0 it takes 1 + `updates_per_minibatch` gradient steps per PPO minibatch, so it
costs more wall time per env step. The comparison is in env steps, as the goal is stated;
wall time is printed beside it.

`--set` overrides apply to every run (e.g. shorter games with env.kwargs.max_steps=600 for a
reduced run on a small machine).
"""

import argparse
import functools
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from loguru import logger

from benchmarks.common import (
    EXPERIMENTS,
    add_seed_options,
    machine_line,
    ratio_line,
    seeds_to_run,
    write_json,
)
from benchmarks.common.arena import duel_context, duel_policy, play
from benchmarks.common.product import live_weights, start_ray
from rl_platform import load_spec, train
from rl_platform.policies import learned_policy
from rl_platform.spec import ExperimentSpec

SPEC = EXPERIMENTS / "duel_bc_ppo.yaml"


@dataclass
class Outcome:
    variant: str
    seed: int
    steps_to_target: int | None = None
    """Env steps at the first evaluation whose `--window` mean reaches the target."""
    first_crossing: int | None = None
    """Env steps at the first single evaluation at or above the target."""
    final_win_rate: float = 0.0
    env_steps: int = 0
    iterations: int = 0
    wall_s: float = 0.0
    final_return: float = 0.0
    curve: list[dict[str, float | None]] = field(default_factory=list)
    """Per evaluation: env steps, win rate, mean shaped return, the learner's bc/accuracy and
    bc/replay_accuracy (None without BC / replay)."""

    def update_target(self, target: float, window: int) -> bool:
        """Record the first crossing and the confirmed result; True once the window is done."""
        rates = [point["win_rate"] for point in self.curve]
        if self.first_crossing is None and rates[-1] >= target:
            self.first_crossing = int(self.curve[-1]["env_steps"])
        for start in range(len(rates) - window + 1):
            if np.mean(rates[start : start + window]) >= target:
                self.steps_to_target = int(self.curve[start]["env_steps"])
                return True
        return False


def run_variant(spec: ExperimentSpec, variant: str, args: argparse.Namespace) -> Outcome:
    """Train `spec` through `rl_platform.train` until the target is confirmed or the budget
    is spent, evaluating in the loop's `on_iteration` hook."""
    outcome, start = Outcome(variant, seed=spec.seed), time.perf_counter()
    out_dir = Path(tempfile.mkdtemp(prefix=f"bc_speedup_{variant}_"))
    watch = functools.partial(_watch, outcome=outcome, spec=spec, args=args)
    train(spec, out_dir=out_dir, on_iteration=watch)
    outcome.wall_s = time.perf_counter() - start
    return outcome


def _watch(
    algo: Any,
    metrics: dict[str, float],
    *,
    outcome: Outcome,
    spec: ExperimentSpec,
    args: argparse.Namespace,
) -> str | None:
    """The hook: every `--eval-every` iterations, evaluate; a stop once the window is done."""
    outcome.iterations, outcome.env_steps = int(metrics["iteration"]), int(metrics["env_steps"])
    if outcome.iterations % args.eval_every:
        return None
    _evaluate(algo, metrics, outcome, spec=spec, args=args)
    done = outcome.update_target(args.target, args.window)
    snapshot = args.out.with_suffix(f".{outcome.variant}.seed{spec.seed}.partial.json")
    write_json(snapshot, asdict(outcome))  # survives a kill
    return f"target {args.target} confirmed over {args.window} evaluations" if done else None


def _evaluate(
    algo: Any,
    metrics: dict[str, float],
    outcome: Outcome,
    *,
    spec: ExperimentSpec,
    args: argparse.Namespace,
) -> None:
    """Play the current policy against `based` and append the result to the curve."""
    policy = learned_policy(
        spec, live_weights(algo), env=duel_context(), sample=args.sample, label=outcome.variant
    )
    result = play(
        policy,
        duel_policy("scripted://duel/based"),
        games=args.eval_games,
        seed=12345 + outcome.seed,
        env_kwargs=spec.env.kwargs,
    )
    rate, score = result["score"], result["return_mean"]
    accuracy, replayed = metrics.get("bc/accuracy"), metrics.get("bc/replay_accuracy")
    outcome.curve.append(
        {
            "env_steps": outcome.env_steps,
            "win_rate": rate,
            "return": score,
            "bc_accuracy": accuracy,
            "bc_replay_accuracy": replayed,
        }
    )
    outcome.final_win_rate, outcome.final_return = rate, score
    logger.info(
        "{}: {} env steps, vs based: win rate {:.3f}, return {:.2f}",
        outcome.variant,
        outcome.env_steps,
        rate,
        score,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_seed_options(parser)
    parser.add_argument("--budget", type=int, default=2_000_000, help="env steps per run")
    parser.add_argument("--target", type=float, default=0.8)
    parser.add_argument("--window", type=int, default=3, help="evaluations averaged to confirm")
    parser.add_argument("--eval-every", type=int, default=1, help="iterations between evals")
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--sample", action="store_true", help="evaluate sampled, not greedy")
    parser.add_argument("--set", action="append", default=[], help="spec override (all runs)")
    parser.add_argument("--only", choices=["bc_ppo", "ppo"], help="run one variant")
    parser.add_argument("--out", type=Path, default=Path("bc_ppo_speedup.json"))
    args = parser.parse_args()
    start_ray()
    outcomes = []
    for seed in seeds_to_run(args):
        overrides = [
            *args.set,
            "logging.wandb=off",
            f"seed={seed}",
            f"stop.env_steps={args.budget}",
        ]
        bc_spec = load_spec(SPEC, overrides=overrides)
        specs = {
            "bc_ppo": bc_spec,
            "ppo": bc_spec.model_copy(update={"bc": None, "name": "duel_ppo"}),
        }
        for name, spec in specs.items():
            if args.only in (None, name):
                outcomes.append(run_variant(spec, name, args))
                _report(outcomes, args)  # after every run: a killed benchmark keeps its rows


def _ratios(outcomes: list[Outcome], attribute: str) -> list[float | None]:
    """BC+PPO / PPO per seed that ran both variants (None where either missed the target)."""
    by_seed: dict[int, dict[str, Outcome]] = {}
    for outcome in outcomes:
        by_seed.setdefault(outcome.seed, {})[outcome.variant] = outcome
    ratios = []
    for pair in by_seed.values():
        if set(pair) != {"bc_ppo", "ppo"}:
            continue
        bc, ppo = getattr(pair["bc_ppo"], attribute), getattr(pair["ppo"], attribute)
        ratios.append(bc / ppo if bc and ppo else None)
    return ratios


def _report(outcomes: list[Outcome], args: argparse.Namespace) -> None:
    mode = "sampled" if args.sample else "greedy"
    print(f"{machine_line()}; {mode} eval, overrides: {args.set}")
    print(
        f"{'seed':>4} {'variant':<8} {f'steps to {args.target} (x{args.window})':>22} "
        f"{'first crossing':>14} {'final win':>9} {'env steps':>10} {'wall s':>8}"
    )
    for o in outcomes:
        confirmed = str(o.steps_to_target) if o.steps_to_target else f">{o.env_steps}"
        first = str(o.first_crossing) if o.first_crossing else f">{o.env_steps}"
        print(
            f"{o.seed:>4} {o.variant:<8} {confirmed:>22} {first:>14} {o.final_win_rate:>9.3f} "
            f"{o.env_steps:>10} {o.wall_s:>8.0f}"
        )
    confirmed, first = _ratios(outcomes, "steps_to_target"), _ratios(outcomes, "first_crossing")
    if confirmed:
        print(ratio_line(f"ratio BC+PPO / PPO (window {args.window})", confirmed, goal=0.25))
        print(ratio_line("ratio BC+PPO / PPO (first crossing)", first))
    payload = {
        "outcomes": [asdict(o) for o in outcomes],
        "ratios": {"window": confirmed, "first_crossing": first},
        "args": vars(args),
    }
    write_json(args.out, payload)


if __name__ == "__main__":
    main()
