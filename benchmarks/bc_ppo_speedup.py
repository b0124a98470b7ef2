"""Env steps to an 80% win rate against `based` on the duel: BC + PPO vs pure PPO.

    uv run python benchmarks/bc_ppo_speedup.py [--budget 5000000] [--target 0.8]
        [--eval-every 1] [--eval-games 200] [--set training.train_batch_size=4000 ...]

Both runs use experiments/duel_bc_ppo.yaml (main vs `based` through a league) with the same
seed and env-step budget; the PPO run drops its `bc:` block. After every `--eval-every`
iterations the current policy (greedy, or sampled with `--sample`) plays `--eval-games` games
against `based` in the vectorized `DuelCore`, half in each seat (draws count 1/2); the first
env step count at which the win rate reaches `--target` is the result. The mean shaped return
of those games is reported too (it moves long before the win rate does). Prints a table, the
ratio BC+PPO / PPO (goal <= 0.25) and writes the same as JSON to `--out`.

`--confirm-evals K` keeps training for K more evaluations after the target is reached and
records them (`after_target`), to show whether the win rate holds or was a lucky evaluation.

The BC + PPO run replays aggregated teacher labels (`bc.replay` in the spec): while the BC
weight is above 0 it takes 1 + `updates_per_minibatch` gradient steps per PPO minibatch, so it
costs more wall time per env step. The comparison is in env steps, as the goal is stated;
wall time is printed beside it.

`--set` overrides apply to both runs (e.g. shorter games with env.kwargs.max_steps=600 for a
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

from rl_platform import load_spec
from rl_platform.envs.duel import DuelCore
from rl_platform.spec import ExperimentSpec
from rl_platform.teachers import DUEL_ENV, scripted_act

SPEC = Path(__file__).resolve().parent.parent / "experiments" / "duel_bc_ppo.yaml"


@dataclass
class Outcome:
    variant: str
    steps_to_target: int | None = None
    final_win_rate: float = 0.0
    env_steps: int = 0
    iterations: int = 0
    wall_s: float = 0.0
    final_return: float = 0.0
    after_target: list[float] = field(default_factory=list)
    """Win rates of the `--confirm-evals` evaluations after the target was reached."""
    curve: list[dict[str, float | None]] = field(default_factory=list)
    """Per evaluation: env steps, win rate, mean shaped return, the learner's bc/accuracy and
    bc/replay_accuracy (None without BC / replay)."""


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


def run_variant(
    spec: ExperimentSpec, variant: str, *, budget: int, target: float, args: argparse.Namespace
) -> Outcome:
    from rl_platform.run.algorithm_build import build_algorithm

    outcome, start = Outcome(variant), time.perf_counter()
    run_dir = Path(tempfile.mkdtemp(prefix=f"bc_speedup_{variant}_"))
    algo = build_algorithm(spec, run_dir=run_dir)
    env_kwargs = dict(spec.env.kwargs)
    try:
        while outcome.env_steps < budget:
            result = algo.train()
            outcome.iterations += 1
            outcome.env_steps = int(result.get("num_env_steps_sampled_lifetime", 0))
            if outcome.iterations % args.eval_every:
                continue
            rate = _evaluate(algo, result, outcome, env_kwargs=env_kwargs, args=args)
            if outcome.steps_to_target is None and rate >= target:
                outcome.steps_to_target = outcome.env_steps
            elif outcome.steps_to_target is not None:
                outcome.after_target.append(rate)
            snapshot = args.out.with_suffix(f".{variant}.partial.json")
            snapshot.write_text(json.dumps(asdict(outcome), indent=2) + "\n")  # survives a kill
            reached = outcome.steps_to_target is not None
            if reached and len(outcome.after_target) >= args.confirm_evals:
                break
    finally:
        algo.stop()
    outcome.wall_s = time.perf_counter() - start
    return outcome


def _evaluate(
    algo, result: dict, outcome: Outcome, *, env_kwargs: dict, args: argparse.Namespace
) -> float:
    """Play the current policy against `based`, append to the curve, return the win rate."""
    rate, score = play_vs_based(
        algo.env_runner.module["main"],
        games=args.eval_games,
        seed=12345,
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
    return rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=5_000_000, help="env steps per variant")
    parser.add_argument("--target", type=float, default=0.8)
    parser.add_argument("--eval-every", type=int, default=1, help="iterations between evals")
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--sample", action="store_true", help="evaluate sampled, not greedy")
    parser.add_argument("--set", action="append", default=[], help="spec override (both runs)")
    parser.add_argument(
        "--confirm-evals", type=int, default=3, help="evaluations to run after the target"
    )
    parser.add_argument("--only", choices=["bc_ppo", "ppo"], help="run one variant")
    parser.add_argument("--out", type=Path, default=Path("bc_ppo_speedup.json"))
    args = parser.parse_args()

    import ray

    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    bc_spec = load_spec(SPEC, overrides=[*args.set, "logging.wandb=off"])
    specs = {"bc_ppo": bc_spec, "ppo": bc_spec.model_copy(update={"bc": None, "name": "duel_ppo"})}
    outcomes = [
        run_variant(spec, name, budget=args.budget, target=args.target, args=args)
        for name, spec in specs.items()
        if args.only in (None, name)
    ]
    _report(outcomes, args)


def _report(outcomes: list[Outcome], args: argparse.Namespace) -> None:
    mode = "sampled" if args.sample else "greedy"
    print(f"machine: {platform.node()} {platform.machine()}, {mode} eval, overrides: {args.set}")
    print(
        f"{'variant':<8} {'steps to ' + str(args.target):>16} {'final win':>9} "
        f"{'env steps':>10} {'wall s':>8}  after target"
    )
    for o in outcomes:
        reached = str(o.steps_to_target) if o.steps_to_target else f">{o.env_steps}"
        print(
            f"{o.variant:<8} {reached:>16} {o.final_win_rate:>9.3f} {o.env_steps:>10} "
            f"{o.wall_s:>8.0f}  {' '.join(f'{rate:.3f}' for rate in o.after_target)}"
        )
    by_name = {o.variant: o for o in outcomes}
    ratio = None
    if {"bc_ppo", "ppo"} <= set(by_name) and all(o.steps_to_target for o in outcomes):
        ratio = by_name["bc_ppo"].steps_to_target / by_name["ppo"].steps_to_target
        print(f"ratio BC+PPO / PPO: {ratio:.3f} (goal <= 0.25)")
    else:
        print("ratio: n/a (a variant did not reach the target within the budget)")
    payload = {"outcomes": [asdict(o) for o in outcomes], "ratio": ratio, "args": vars(args)}
    args.out.write_text(json.dumps(payload, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
