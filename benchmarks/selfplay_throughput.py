"""Self-play throughput: RLlib's stock runner vs rl_platform's array runner vs plain torch.

    uv run python benchmarks/selfplay_throughput.py [--rounds 6] [--games duel connect_four]
        [--torch-threads 1] [--out results.json]

One invocation, one process, the same machine, side by side:

(a) the experiment file with `env.runner: rllib` (RLlib's `MultiAgentEnvRunner`),
(b) the same file with `env.runner: vector` (rl_platform/sampling/vector_env_runner.py),
(c) the duel only: a plain-torch PPO loop without Ray (benchmarks/plain_torch_ppo.py) on the
    same vectorized game with the same network, batch, minibatch and epochs: the ceiling.

For each: sampling-only env steps/s (the driver's env runner sampling one train batch of
env steps with exploration) and end-to-end env steps/s (one `algo.train()`: sampling,
learner connectors, PPO update, weight sync, league bookkeeping), after one warm-up
iteration. The contenders alternate round by round (`--rounds` of each), so drifts in the
machine's speed during the run hit every row alike. Experiments: experiments/duel_vs_based.yaml and
experiments/connect_four_selfplay.yaml as shipped (their `envs_per_runner` games per runner,
driver sampling). The plain loop plays `based` in every game where (a) and (b) play the
league's mix; the env-step cost of both opponents is a vectorized numpy call either way.
Every row uses the same torch thread count (`--torch-threads`, default 1).

Each ratio is reported as its median, min and max over the rounds (one ratio per round, from
that round's rates), with the totals' ratio beside it; a goal is met when the median meets it.
Throughput does not depend on the seed, so rounds, not seeds, are the repetitions here.
"""

import argparse
import functools
import json
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import ray
import torch
from plain_torch_ppo import PlainPPOConfig
from plain_torch_ppo import run as run_plain
from spread import ratio_line

from rl_platform import load_spec
from rl_platform.league.callback import league_extension
from rl_platform.rllib_config import build_algorithm_config

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = {
    "duel": ROOT / "experiments" / "duel_vs_based.yaml",
    "connect_four": ROOT / "experiments" / "connect_four_selfplay.yaml",
}


def _env_steps(result: dict[str, Any]) -> int:
    runners = result.get("env_runners", {})
    return int(runners.get("num_env_steps_sampled_lifetime", 0) or 0)


class Contender:
    """One row: times sampling-only and end-to-end rounds, summed over all rounds, and keeps
    each round's rates for the spread."""

    def __init__(self) -> None:
        self.sampled = self.sample_s = 0.0
        self.trained = self.train_s = 0.0
        self.rounds: list[dict[str, float]] = []

    def play_round(self) -> None:
        before = (self.sampled, self.sample_s, self.trained, self.train_s)
        self.sample_round()
        self.train_round()
        sampled, sample_s, trained, train_s = (
            now - then
            for now, then in zip(
                (self.sampled, self.sample_s, self.trained, self.train_s), before, strict=True
            )
        )
        self.rounds.append(
            {
                "sampling_env_steps_per_s": sampled / sample_s,
                "end_to_end_env_steps_per_s": trained / train_s,
            }
        )

    def sample_round(self) -> None:
        raise NotImplementedError

    def train_round(self) -> None:
        raise NotImplementedError

    def row(self) -> dict[str, float]:
        return {
            "sampling_env_steps_per_s": self.sampled / self.sample_s,
            "end_to_end_env_steps_per_s": self.trained / self.train_s,
        }


class RLlibContender(Contender):
    """An experiment file with `env.runner: runner` (the driver's env runner samples)."""

    def __init__(self, game: str, runner: str, run_dir: str) -> None:
        super().__init__()
        overrides = [f"env.runner={runner}", "logging.wandb=off"]
        self.spec = load_spec(EXPERIMENTS[game], overrides=overrides)
        extension = functools.partial(league_extension, run_dir=run_dir)
        self.algo = build_algorithm_config(self.spec, extensions=[extension]).build_algo()
        self.steps = _env_steps(self.algo.train())  # warm-up: first update, league init

    def sample_round(self) -> None:
        start, sampled = time.perf_counter(), 0
        while sampled < self.spec.training.train_batch_size:
            self.algo.env_runner.sample(explore=True)
            sampled += int(self.algo.env_runner.get_metrics().get("num_env_steps_sampled", 0))
        self.sample_s += time.perf_counter() - start
        self.sampled += sampled

    def train_round(self) -> None:
        start = time.perf_counter()
        steps = _env_steps(self.algo.train())
        self.train_s += time.perf_counter() - start
        self.trained += steps - self.steps
        self.steps = steps


class PlainContender(Contender):
    """benchmarks/plain_torch_ppo.py with the duel spec's game count, network and batch."""

    def __init__(self) -> None:
        super().__init__()
        spec = load_spec(EXPERIMENTS["duel"])
        t = spec.training
        self.config = PlainPPOConfig(
            num_games=spec.env.envs_per_runner,
            train_batch_size=t.train_batch_size,
            minibatch_size=t.minibatch_size,
            num_epochs=t.num_epochs,
            lr=t.lr,
            gamma=t.gamma,
            lam=t.lambda_,
            entropy_coeff=t.entropy_coeff,
            vf_loss_coeff=t.vf_loss_coeff,
            hidden=tuple(spec.model.hidden),
            seed=spec.seed,
            torch_threads=torch.get_num_threads(),
        )

    def sample_round(self) -> None:
        out = run_plain(self.config, env_steps=self.config.train_batch_size, sample_only=True)
        self.sampled += out["env_steps"]
        self.sample_s += out["sample_s"]

    def train_round(self) -> None:
        out = run_plain(self.config, env_steps=self.config.train_batch_size)
        self.trained += out["env_steps"]
        self.train_s += out["wall_s"]


def measure(game: str, *, rounds: int, run_dir: str) -> dict[str, dict[str, float]]:
    """Rows for one game; contenders alternate round by round, so a machine whose speed
    drifts during the run slows every row alike."""
    contenders: dict[str, Contender] = {
        runner: RLlibContender(game, runner, f"{run_dir}/{game}_{runner}")
        for runner in ("rllib", "vector")
    }
    if game == "duel":
        contenders["plain_torch"] = PlainContender()
    try:
        for _ in range(rounds):
            for contender in contenders.values():
                contender.play_round()
    finally:
        for contender in contenders.values():
            if isinstance(contender, RLlibContender):
                contender.algo.stop()
    return {name: c.row() | {"rounds": c.rounds} for name, c in contenders.items()}


RATIOS = {
    # name: (numerator row, denominator row, rate, goal or None)
    "sampling vector/rllib": ("vector", "rllib", "sampling_env_steps_per_s", 15.0),
    "end_to_end vector/rllib": ("vector", "rllib", "end_to_end_env_steps_per_s", 3.5),
    "end_to_end vector/plain_torch": (
        "vector",
        "plain_torch",
        "end_to_end_env_steps_per_s",
        0.8,
    ),
    "sampling vector/plain_torch": ("vector", "plain_torch", "sampling_env_steps_per_s", None),
}


def _ratios(rows: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Each ratio of the totals, and one per round."""
    out = {}
    for name, (top, bottom, rate, goal) in RATIOS.items():
        if top not in rows or bottom not in rows:
            continue
        pairs = zip(rows[top]["rounds"], rows[bottom]["rounds"], strict=True)
        per_round = [a[rate] / b[rate] for a, b in pairs]
        out[name] = {
            "total": rows[top][rate] / rows[bottom][rate],
            "rounds": per_round,
            "goal": goal,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--games", nargs="+", default=list(EXPERIMENTS), choices=EXPERIMENTS)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    report: dict[str, Any] = {"machine": platform.platform(), "args": vars(args) | {"out": None}}
    with tempfile.TemporaryDirectory() as run_dir:
        for game in args.games:
            rows = measure(game, rounds=args.rounds, run_dir=run_dir)
            report[game] = {"rows": rows, "ratios": _ratios(rows)}
            _print(game, report[game])
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2))


def _print(game: str, section: dict) -> None:
    print(f"\n{game}: env steps/s (sampling only | end to end)")
    for name, row in section["rows"].items():
        print(
            f"  {name:<12} {row['sampling_env_steps_per_s']:>10,.0f} | "
            f"{row['end_to_end_env_steps_per_s']:>8,.0f}"
        )
    for name, ratio in section["ratios"].items():
        line = ratio_line(name, ratio["rounds"], goal=ratio["goal"], at_most=False, unit="rounds")
        print(f"  {line}; totals x{ratio['total']:.2f}")


if __name__ == "__main__":
    main()
