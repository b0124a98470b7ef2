"""Self-play throughput: RLlib's stock runner vs rl_platform's array runner vs plain torch.

    uv run python benchmarks/selfplay_throughput.py [--iterations 4] [--sample-steps 64000]
        [--games duel connect_four] [--out results.json]

One invocation, one process, the same machine, side by side:

(a) the experiment file with `env.runner: rllib` (RLlib's `MultiAgentEnvRunner`),
(b) the same file with `env.runner: vector` (rl_platform/sampling/vector_env_runner.py),
(c) the duel only: a plain-torch PPO loop without Ray (benchmarks/plain_torch_ppo.py) on the
    same vectorized game with the same network, batch, minibatch and epochs: the ceiling.

For each: sampling-only env steps/s (the driver's env runner sampling `--sample-steps`
with exploration, after one warm-up iteration) and end-to-end env steps/s (`--iterations`
`algo.train()` calls: sampling, learner connectors, PPO update, weight sync, league
bookkeeping). Experiments: experiments/duel_selfplay.yaml and
experiments/connect_four_selfplay.yaml as shipped (their `envs_per_runner` games per runner,
driver sampling). The plain loop plays `based` in every game where (a) and (b) play the
league's mix; the env-step cost of both opponents is a vectorized numpy call either way.
Every row uses the same torch thread count (`--torch-threads`, default 1).
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

from rl_platform import load_spec
from rl_platform.league.callback import league_extension
from rl_platform.rllib_config import build_algorithm_config

ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = {
    "duel": ROOT / "experiments" / "duel_selfplay.yaml",
    "connect_four": ROOT / "experiments" / "connect_four_selfplay.yaml",
}


def _env_steps(result: dict[str, Any]) -> int:
    runners = result.get("env_runners", {})
    return int(runners.get("num_env_steps_sampled_lifetime", 0) or 0)


def measure_rllib(game: str, runner: str, *, iterations: int, sample_steps: int) -> dict:
    """Sampling-only and end-to-end env steps/s of one experiment file with `runner`."""
    spec = load_spec(EXPERIMENTS[game], overrides=[f"env.runner={runner}", "logging.wandb=off"])
    with tempfile.TemporaryDirectory() as run_dir:
        extension = functools.partial(league_extension, run_dir=run_dir)
        algo = build_algorithm_config(spec, extensions=[extension]).build_algo()
        try:
            algo.train()  # warm-up: first update, league init, lazy imports
            start = time.perf_counter()
            sampled = 0
            while sampled < sample_steps:
                algo.env_runner.sample(explore=True)
                sampled += int(algo.env_runner.get_metrics().get("num_env_steps_sampled", 0))
            sample_s = time.perf_counter() - start
            before = _env_steps(algo.train())
            start = time.perf_counter()
            for _ in range(iterations):
                after = _env_steps(algo.train())
            train_s = time.perf_counter() - start
        finally:
            algo.stop()
    return {
        "sampling_env_steps_per_s": sampled / sample_s,
        "end_to_end_env_steps_per_s": (after - before) / train_s,
        "envs_per_runner": spec.env.envs_per_runner,
    }


def measure_plain(*, iterations: int, sample_steps: int) -> dict:
    spec = load_spec(EXPERIMENTS["duel"])
    t = spec.training
    config = PlainPPOConfig(
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
    sampling = run_plain(config, env_steps=sample_steps, sample_only=True)
    e2e = run_plain(config, env_steps=(iterations + 1) * t.train_batch_size)
    return {
        "sampling_env_steps_per_s": sampling["sample_env_steps_per_s"],
        "end_to_end_env_steps_per_s": e2e["env_steps_per_s"],
        "envs_per_runner": config.num_games,
    }


def _ratios(rows: dict[str, dict]) -> dict[str, float]:
    a, b = rows["rllib"], rows["vector"]
    out = {
        "sampling vector/rllib": b["sampling_env_steps_per_s"] / a["sampling_env_steps_per_s"],
        "end_to_end vector/rllib": b["end_to_end_env_steps_per_s"]
        / a["end_to_end_env_steps_per_s"],
    }
    if "plain_torch" in rows:
        c = rows["plain_torch"]
        out["end_to_end vector/plain_torch"] = (
            b["end_to_end_env_steps_per_s"] / c["end_to_end_env_steps_per_s"]
        )
        out["sampling vector/plain_torch"] = (
            b["sampling_env_steps_per_s"] / c["sampling_env_steps_per_s"]
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--sample-steps", type=int, default=64000)
    parser.add_argument("--games", nargs="+", default=list(EXPERIMENTS), choices=EXPERIMENTS)
    parser.add_argument("--torch-threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.torch_threads)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    report: dict[str, Any] = {"machine": platform.platform(), "args": vars(args) | {"out": None}}
    for game in args.games:
        rows = {
            runner: measure_rllib(
                game, runner, iterations=args.iterations, sample_steps=args.sample_steps
            )
            for runner in ("rllib", "vector")
        }
        if game == "duel":
            rows["plain_torch"] = measure_plain(
                iterations=args.iterations, sample_steps=args.sample_steps
            )
        report[game] = {"rows": rows, "ratios": _ratios(rows)}
        _print(game, report[game])
    if args.out is not None:
        args.out.write_text(json.dumps(report, indent=2))


def _print(game: str, section: dict) -> None:
    print(f"\n{game}: env steps/s (sampling only | end to end)")
    for name, row in section["rows"].items():
        print(
            f"  {name:<12} {row['sampling_env_steps_per_s']:>10,.0f} | "
            f"{row['end_to_end_env_steps_per_s']:>8,.0f}   ({row['envs_per_runner']} games)"
        )
    for name, value in section["ratios"].items():
        print(f"  {name:<32} x{value:.2f}")


if __name__ == "__main__":
    main()
