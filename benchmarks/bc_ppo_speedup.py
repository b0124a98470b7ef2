"""Env steps to an 80% win rate against `based` on the duel: BC + PPO vs pure PPO, over seeds.

    uv run python benchmarks/bc_ppo_speedup.py [--seeds 0 1 2] [--quick] [--budget 2000000]
        [--target 0.8] [--window 3] [--eval-every 1] [--eval-games 200] [--set k=v ...]

Both runs of a seed use experiments/duel_bc_ppo.yaml (main vs `based` through a league) with
that seed and the same env-step budget; the PPO run drops its `bc:` block. After every
`--eval-every` iterations the current policy (greedy, or sampled with `--sample`) plays
`--eval-games` games against `based` in the vectorized `DuelCore`, half in each seat (draws
count 1/2).

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
import json
import platform
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
from loguru import logger
from spread import add_seed_options, ratio_line, seeds_to_run

from rl_platform import load_spec
from rl_platform.envs.duel import DuelCore
from rl_platform.spec import ExperimentSpec
from rl_platform.teachers import DUEL_ENV, scripted_act

SPEC = Path(__file__).resolve().parent.parent / "experiments" / "duel_bc_ppo.yaml"


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


def play_vs_based(
    module, *, games: int, seed: int, env_kwargs: dict, sample: bool = False
) -> tuple[float, float]:
    """(win rate, mean shaped return) of `module` (greedy, or sampling its action distribution)
    vs `based` over `games` games, half in each seat; a draw counts 1/2."""
    core = DuelCore(games, seed=seed, **env_kwargs)
    obs = core.reset(seed=seed)
    seat = (np.arange(games) >= games // 2).astype(np.int64)  # which player the module is
    rows = np.arange(games)
    based, rng = scripted_act(env_id=DUEL_ENV, agent="based"), np.random.default_rng(seed)
    winner, returns = np.full(games, -1), np.zeros(games)
    while (winner < 0).any():
        with torch.no_grad():
            out = module.forward_inference({"obs": torch.from_numpy(obs[rows, seat])})
        actions = np.zeros((games, 2), dtype=np.int64)
        logits = out["action_dist_inputs"]
        if sample:
            chosen = torch.distributions.Categorical(logits=logits).sample()
        else:
            chosen = logits.argmax(-1)
        actions[rows, seat] = chosen.numpy()
        actions[rows, 1 - seat] = based(obs[rows, 1 - seat], rng)
        step = core.step(actions)
        obs = step.obs
        returns += np.where(winner < 0, step.rewards[rows, seat], 0.0)
        newly = (winner < 0) & (step.winner >= 0)
        winner[newly] = step.winner[newly]
    wins = np.where(winner == 2, 0.5, (winner == seat).astype(float))
    return float(wins.mean()), float(returns.mean())


def run_variant(spec: ExperimentSpec, variant: str, args: argparse.Namespace) -> Outcome:
    from rl_platform.run.algorithm_build import build_algorithm

    outcome, start = Outcome(variant, seed=spec.seed), time.perf_counter()
    run_dir = Path(tempfile.mkdtemp(prefix=f"bc_speedup_{variant}_"))
    algo = build_algorithm(spec, run_dir=run_dir)
    env_kwargs = dict(spec.env.kwargs)
    try:
        while outcome.env_steps < args.budget:
            result = algo.train()
            outcome.iterations += 1
            outcome.env_steps = int(result.get("num_env_steps_sampled_lifetime", 0))
            if outcome.iterations % args.eval_every:
                continue
            _evaluate(algo, result, outcome, env_kwargs=env_kwargs, args=args)
            done = outcome.update_target(args.target, args.window)
            snapshot = args.out.with_suffix(f".{variant}.seed{spec.seed}.partial.json")
            snapshot.write_text(json.dumps(asdict(outcome), indent=2) + "\n")  # survives a kill
            if done:
                break
    finally:
        algo.stop()
    outcome.wall_s = time.perf_counter() - start
    return outcome


def _evaluate(
    algo, result: dict, outcome: Outcome, *, env_kwargs: dict, args: argparse.Namespace
) -> None:
    """Play the current policy against `based` and append the result to the curve."""
    rate, score = play_vs_based(
        algo.env_runner.module["main"],
        games=args.eval_games,
        seed=12345 + outcome.seed,
        env_kwargs=env_kwargs,
        sample=args.sample,
    )
    learner = result.get("learners", {}).get("main") or {}
    accuracy, replayed = learner.get("bc/accuracy"), learner.get("bc/replay_accuracy")
    outcome.curve.append(
        {
            "env_steps": outcome.env_steps,
            "win_rate": rate,
            "return": score,
            "bc_accuracy": None if accuracy is None else float(accuracy),
            "bc_replay_accuracy": None if replayed is None else float(replayed),
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

    import ray

    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    outcomes = []
    for seed in seeds_to_run(args):
        bc_spec = load_spec(SPEC, overrides=[*args.set, "logging.wandb=off", f"seed={seed}"])
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
    print(f"machine: {platform.node()} {platform.machine()}, {mode} eval, overrides: {args.set}")
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
    args.out.write_text(json.dumps(payload, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
