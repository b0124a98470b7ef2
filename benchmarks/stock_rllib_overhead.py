"""What rl_platform costs over stock RLlib on one spec: Hopper-v5 PPO with the same algorithm
settings, `rlp train experiments/mujoco_ppo.yaml` against RLlib's `PPOConfig` built by hand
(`benchmarks/stock_rllib_hopper_ppo.py`, no rl_platform import), each for the same env steps,
in turns (A B A B ...), on this machine.

    python -m benchmarks.stock_rllib_overhead [--env-steps 50000] [--rounds 2] [--seed 0]

Each arm runs in a fresh process; before each, the benchmark waits until the previous arm's
Ray processes have ended. Env steps/s of an arm is env steps over its training time (ours:
`trial_metrics.json`, from the loop's start to its end, checkpoints included; stock: the
`algo.train()` loop); process wall time (Ray's start included) is printed beside it. The ratio
is ours / stock per round, reported as median, min and max over the rounds. The machine and
its load are printed before and after.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common.output import machine_line
from benchmarks.common.paths import EXPERIMENTS, REPO
from benchmarks.common.processes import wait_until_ray_has_ended
from benchmarks.common.product import QUIET, rlp_train

SPEC = EXPERIMENTS / "mujoco_ppo.yaml"
ARMS = ("rl_platform", "stock")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--env-steps", type=int, default=50_000, help="env steps per arm run")
    parser.add_argument("--rounds", type=int, default=2, help="A B rounds")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.env_steps < 2048 or args.rounds < 1:
        parser.error("--env-steps must be at least one iteration (2048), --rounds at least 1")
    return args


def run_ours(env_steps: int, seed: int, out: Path) -> dict[str, float]:
    wait_until_ray_has_ended()
    started = time.time()
    overrides = [*QUIET, f"seed={seed}", f"stop.env_steps={env_steps}"]
    overrides += ["checkpoint.every_minutes=null", "checkpoint.every_iterations=null"]
    run_dir = rlp_train(SPEC, out=out, overrides=overrides)
    summary = json.loads((run_dir / "trial_metrics.json").read_text())
    return {
        "env_steps": summary["frame"],
        "env_steps_per_s": summary["env_steps_per_s"],
        "process_s": time.time() - started,
        "return": summary["total_reward_ma"],
    }


def run_stock(env_steps: int, seed: int) -> dict[str, float]:
    wait_until_ray_has_ended()
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.stock_rllib_hopper_ppo", str(env_steps), str(seed)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def ratios(results: list[dict[str, dict[str, float]]]) -> dict[str, float]:
    """Ours / stock env steps/s per round: median, min, max."""
    per_round = [
        r["rl_platform"]["env_steps_per_s"] / r["stock"]["env_steps_per_s"] for r in results
    ]
    return {
        "median": statistics.median(per_round),
        "min": min(per_round),
        "max": max(per_round),
        "rounds": per_round,
    }


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"start: {machine_line()}")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(args.rounds):
            this_round = {
                "rl_platform": run_ours(args.env_steps, args.seed, Path(tmp)),
                "stock": run_stock(args.env_steps, args.seed),
            }
            for arm in ARMS:
                got = this_round[arm]
                print(
                    f"round {number + 1} {arm:>11}: {got['env_steps_per_s']:,.0f} env steps/s "
                    f"({got['env_steps']:,} env steps, process {got['process_s']:.0f} s, "
                    f"return {got['return']:.1f})"
                )
            results.append(this_round)
    summary = ratios(results)
    print(
        f"rl_platform / stock env steps/s: x{summary['median']:.2f} median over "
        f"{args.rounds} rounds (min x{summary['min']:.2f}, max x{summary['max']:.2f})"
    )
    print(f"end: {machine_line()}")
    print("RESULT " + json.dumps({"rounds": results, "ratio": summary}))


if __name__ == "__main__":
    main()
