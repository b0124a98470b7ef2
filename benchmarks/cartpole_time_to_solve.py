"""Wall time to solve CartPole-v1: `rlp train experiments/cartpole_ppo.yaml` vs RLlib's example.

Both run in one invocation of this script, one after the other, each in a fresh process so the
wall time includes starting Ray. "Solved" = 100-episode mean return >= 450. The RLlib side is
RLlib's own tuned CartPole PPO example: PPOConfig with lr=3e-4, num_epochs=6, vf_loss_coeff=0.01
and everything else default (2 remote env runners, batch 4000, minibatch 128).

    uv run python benchmarks/cartpole_time_to_solve.py [--seeds 0 1 2] [--quick] [--max-minutes 20]

Three seeds by default (`--quick`: the first only); the wall-time ratio is reported as its
median, min and max over seeds, and the goal (<= 0.33) counts as met when the median meets it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spread import add_seed_options, ratio_line, seeds_to_run

REPO = Path(__file__).resolve().parent.parent
TARGET = 450.0

RLLIB_BASELINE = r"""
import json, sys, time
t0, target = float(sys.argv[1]), float(sys.argv[2])
seed, limit_s = int(sys.argv[3]), float(sys.argv[4])
import ray
from ray.rllib.algorithms.ppo import PPOConfig
ray.init(address="local", include_dashboard=False)
config = (
    PPOConfig()
    .environment("CartPole-v1")
    .training(lr=3e-4, num_epochs=6, vf_loss_coeff=0.01)
    .debugging(seed=seed)
)
algo = config.build_algo()
ret, steps = float("nan"), 0
while time.time() - t0 < limit_s:
    result = algo.train()
    ret = result["env_runners"].get("episode_return_mean", float("nan"))
    steps = int(result["num_env_steps_sampled_lifetime"])
    if ret >= target:
        break
print("RESULT " + json.dumps({"return": ret, "env_steps": steps, "wall_s": time.time() - t0}))
"""


def run_rlp(seed: int, limit_s: float, out_dir: Path) -> dict:
    rlp = Path(sys.executable).parent / "rlp"
    started = time.time()
    command = [
        str(rlp),
        "train",
        str(REPO / "experiments/cartpole_ppo.yaml"),
        "--out",
        str(out_dir),
        "--set",
        f"seed={seed}",
        "--set",
        f"stop.minutes={limit_s / 60:.2f}",
    ]
    subprocess.run(command, check=True, capture_output=True, text=True)
    wall_s = time.time() - started
    run_dir = max((out_dir / "cartpole_ppo").iterdir(), key=lambda p: p.stat().st_mtime)
    summary = json.loads((run_dir / "trial_metrics.json").read_text())
    return {"return": summary["total_reward_ma"], "env_steps": summary["frame"], "wall_s": wall_s}


def run_rllib(seed: int, limit_s: float) -> dict:
    started = time.time()
    proc = subprocess.run(
        [sys.executable, "-c", RLLIB_BASELINE, str(started), str(TARGET), str(seed), str(limit_s)],
        check=True,
        capture_output=True,
        text=True,
    )
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    add_seed_options(parser)
    parser.add_argument("--max-minutes", type=float, default=20.0)
    args = parser.parse_args()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    limit_s = args.max_minutes * 60
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds_to_run(args):
            ours = run_rlp(seed, limit_s, Path(tmp))
            theirs = run_rllib(seed, limit_s)
            rows.append((seed, ours, theirs))
            sys.stdout.write(
                f"seed {seed}: rlp {ours['wall_s']:.1f}s {ours['env_steps']} steps return "
                f"{ours['return']:.1f} | rllib {theirs['wall_s']:.1f}s {theirs['env_steps']} steps "
                f"return {theirs['return']:.1f} | ratio {ours['wall_s'] / theirs['wall_s']:.2f}\n"
            )
    # A seed where either side did not solve within --max-minutes has no ratio.
    ratios = [
        o["wall_s"] / t["wall_s"] if min(o["return"], t["return"]) >= TARGET else None
        for _, o, t in rows
    ]
    sys.stdout.write(ratio_line("wall-time ratio rlp/rllib", ratios, goal=0.33) + "\n")


if __name__ == "__main__":
    main()
