"""Self-play throughput: RLlib's stock runner vs rl_platform's array runner vs plain torch.

    uv run python -m benchmarks.selfplay_throughput [--rounds 6] [--games duel connect_four]
        [--torch-threads 1] [--out results.json]

One invocation, one process, the same machine, side by side:

(a) the experiment file with `env.runner: rllib` (RLlib's `MultiAgentEnvRunner`),
(b) the same file with `env.runner: vector` (rl_platform/env_runner/vector_env_runner.py) and
    the learner `training.learner: auto` picks (the array learner on the duel), and for the
    duel also the array runner with RLlib's learner (`vector_rllib_learner`, the path before
    the array learner) and with `resources.overlap: true` (`vector_overlap`, end to end only),
(c) the duel only: a plain-torch PPO loop without Ray (benchmarks/plain_torch_ppo.py) on the
    same vectorized game with the same network, batch, minibatch and epochs: the ceiling.

For each: sampling-only env steps/s (the driver's env runner sampling one train batch of
env steps with exploration) and end-to-end env steps/s (one iteration of `rlp train`'s loop:
sampling, learner connectors, PPO update, weight sync, league bookkeeping, the callbacks
`rlp train` installs, health checks, metrics rows and any checkpoint due), after one warm-up
iteration. (a) and (b) train through `rl_platform.train`; a round is one iteration of its loop
(hook to hook, `on_iteration`) followed by one sampling-only round in the hook. The rows run
one after another (`--rounds` of each): a drift in the machine's speed during the run shows
in the spread of the per-round ratios. Experiments: experiments/duel_vs_based.yaml and
experiments/connect_four_selfplay.yaml as shipped (their `envs_per_runner` games per runner,
driver sampling). The plain loop plays `based` in every game where (a) and (b) play the
league's mix; the env-step cost of both opponents is a vectorized numpy call either way.
Every row uses the same torch thread count (`--torch-threads`, default 1).

Each ratio is reported as its median, min and max over the rounds (one ratio per round, from
that round's rates), with the totals' ratio beside it; a goal is met when the median meets it.
Throughput does not depend on the seed, so rounds, not seeds, are the repetitions here.
"""

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks.common import EXPERIMENTS, machine_line, ratio_line, write_json
from benchmarks.common.product import QUIET, start_ray
from benchmarks.plain_torch_ppo import PlainPPOConfig
from benchmarks.plain_torch_ppo import run as run_plain
from rl_platform import load_spec, train

GAMES = {
    "duel": EXPERIMENTS / "duel_vs_based.yaml",
    "connect_four": EXPERIMENTS / "connect_four_selfplay.yaml",
}


class Contender:
    """One row: sampling-only and end-to-end env steps and seconds, summed over all rounds,
    and each round's rates for the spread."""

    def __init__(self) -> None:
        self.sampled = self.sample_s = 0.0
        self.trained = self.train_s = 0.0
        self.rounds: list[dict[str, float]] = []

    def add_round(self, *, sampled: float, sample_s: float, trained: float, train_s: float):
        self.sampled, self.sample_s = self.sampled + sampled, self.sample_s + sample_s
        self.trained, self.train_s = self.trained + trained, self.train_s + train_s
        self.rounds.append(
            {
                "sampling_env_steps_per_s": sampled / sample_s if sample_s else None,
                "end_to_end_env_steps_per_s": trained / train_s,
            }
        )

    def row(self) -> dict[str, Any]:
        return {
            "sampling_env_steps_per_s": self.sampled / self.sample_s if self.sample_s else None,
            "end_to_end_env_steps_per_s": self.trained / self.train_s,
            "rounds": self.rounds,
        }


class RLlibContender(Contender):
    """An experiment file with `env.runner: runner`, trained through `rl_platform.train`;
    this object is its `on_iteration` hook."""

    def __init__(self, game: str, settings: list[str], *, rounds: int, torch_threads: int) -> None:
        super().__init__()
        overrides = [*settings, *QUIET, f"stop.iterations={rounds + 1}"]
        overrides.append(f"resources.torch_threads={torch_threads}")
        self.spec = load_spec(GAMES[game], overrides=overrides)
        # With overlap an extra sample call would take the batch the next iteration trains
        # on: its rows report end to end only.
        self.measure_sampling = not self.spec.resources.overlap
        self.steps = 0
        self.last: float | None = None  # when the previous round ended

    def run(self, out_dir: str) -> None:
        train(self.spec, out_dir=out_dir, on_iteration=self)

    def __call__(self, algo: Any, metrics: dict[str, float]) -> None:
        ended, steps = time.perf_counter(), int(metrics["env_steps"])
        if self.last is not None:  # the first iteration is the warm-up
            sampled, sample_s = self._sample(algo) if self.measure_sampling else (0, 0.0)
            self.add_round(
                sampled=sampled,
                sample_s=sample_s,
                trained=steps - self.steps,
                train_s=ended - self.last,
            )
        self.steps, self.last = steps, time.perf_counter()

    def _sample(self, algo: Any) -> tuple[int, float]:
        """One train batch of env steps sampled by the driver's env runner, with exploration."""
        start, sampled = time.perf_counter(), 0
        while sampled < self.spec.training.train_batch_size:
            algo.env_runner.sample(explore=True)
            sampled += int(algo.env_runner.get_metrics().get("num_env_steps_sampled", 0))
        return sampled, time.perf_counter() - start


class PlainContender(Contender):
    """benchmarks/plain_torch_ppo.py with the duel spec's game count, network and batch."""

    def __init__(self) -> None:
        super().__init__()
        spec = load_spec(GAMES["duel"])
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

    def run(self, rounds: int) -> None:
        for _ in range(rounds):
            sampling = run_plain(
                self.config, env_steps=self.config.train_batch_size, sample_only=True
            )
            training = run_plain(self.config, env_steps=self.config.train_batch_size)
            self.add_round(
                sampled=sampling["env_steps"],
                sample_s=sampling["sample_s"],
                trained=training["env_steps"],
                train_s=training["wall_s"],
            )


CONTENDERS = {
    # row: spec overrides; `vector` is the array runner with the learner `auto` picks
    "rllib": ["env.runner=rllib"],
    "vector_rllib_learner": ["env.runner=vector", "training.learner=rllib"],
    "vector": ["env.runner=vector"],
    "vector_overlap": ["env.runner=vector", "resources.overlap=true"],
}
SIMULTANEOUS_ONLY = ("vector_rllib_learner", "vector_overlap")
"""Rows that differ from `vector` only where the array learner serves: the duel."""


def measure(game: str, *, rounds: int, torch_threads: int, run_dir: str) -> dict[str, dict]:
    """Rows for one game, one contender after another."""
    rows = {}
    for name, settings in CONTENDERS.items():
        if game != "duel" and name in SIMULTANEOUS_ONLY:
            continue
        contender = RLlibContender(game, settings, rounds=rounds, torch_threads=torch_threads)
        contender.run(f"{run_dir}/{game}_{name}")
        rows[name] = contender.row()
    if game == "duel":
        plain = PlainContender()
        plain.run(rounds)
        rows["plain_torch"] = plain.row()
    return rows


RATIOS = {
    # name: (numerator row, denominator row, rate, goal or None)
    "sampling vector/rllib": ("vector", "rllib", "sampling_env_steps_per_s", 15.0),
    "end_to_end vector/rllib": ("vector", "rllib", "end_to_end_env_steps_per_s", 3.5),
    "end_to_end vector/plain_torch": ("vector", "plain_torch", "end_to_end_env_steps_per_s", 1.3),
    "end_to_end vector_overlap/plain_torch": (
        "vector_overlap",
        "plain_torch",
        "end_to_end_env_steps_per_s",
        1.3,
    ),
    "end_to_end vector/vector_rllib_learner": (
        "vector",
        "vector_rllib_learner",
        "end_to_end_env_steps_per_s",
        None,
    ),
    "sampling vector/plain_torch": ("vector", "plain_torch", "sampling_env_steps_per_s", None),
}


def _ratios(rows: dict[str, dict]) -> dict[str, dict[str, Any]]:
    """Each ratio of the totals, and one per round."""
    out = {}
    for name, (top, bottom, rate, goal) in RATIOS.items():
        if top not in rows or bottom not in rows:
            continue
        if rows[top][rate] is None or rows[bottom][rate] is None:
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
    parser.add_argument("--games", nargs="+", default=list(GAMES), choices=GAMES)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    start_ray(num_cpus=2)
    print(machine_line())
    report: dict[str, Any] = {"machine": machine_line(), "args": vars(args) | {"out": None}}
    with tempfile.TemporaryDirectory() as run_dir:
        for game in args.games:
            rows = measure(
                game, rounds=args.rounds, torch_threads=args.torch_threads, run_dir=run_dir
            )
            report[game] = {"rows": rows, "ratios": _ratios(rows)}
            _print(game, report[game])
    if args.out is not None:
        write_json(args.out, report)


def _print(game: str, section: dict) -> None:
    print(f"\n{game}: env steps/s (sampling only | end to end)")
    for name, row in section["rows"].items():
        sampling = row["sampling_env_steps_per_s"]
        shown = "-" if sampling is None else f"{sampling:,.0f}"
        print(f"  {name:<21} {shown:>10} | {row['end_to_end_env_steps_per_s']:>8,.0f}")
    for name, ratio in section["ratios"].items():
        line = ratio_line(name, ratio["rounds"], goal=ratio["goal"], at_most=False, unit="rounds")
        print(f"  {line}; totals x{ratio['total']:.2f}")


if __name__ == "__main__":
    main()
