"""Wall time to solve CartPole-v1: `rlp train experiments/cartpole_ppo.yaml` vs RLlib's example.

Both run in one invocation of this script, one after the other, each in a fresh process so the
wall time includes starting Ray. "Solved" = 100-episode mean return >= 450. Our side is the
`rlp train` command; the RLlib side is RLlib's own tuned CartPole PPO example
(`benchmarks/rllib_cartpole_example.py`, stock RLlib on purpose).

    uv run python -m benchmarks.cartpole_time_to_solve [--seeds 0 1 2] [--quick] [--max-minutes 20]

Before each side starts, the benchmark waits until the other side's Ray processes have ended
(`rlp train` exits without waiting for them), so no side starts beside the other's teardown.

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

from benchmarks.common import EXPERIMENTS, REPO, add_seed_options, ratio_line, seeds_to_run
from benchmarks.common.processes import wait_until_ray_has_ended
from benchmarks.common.product import rlp_train

TARGET = 450.0


def run_rlp(seed: int, limit_s: float, out_dir: Path) -> dict:
    wait_until_ray_has_ended()
    started = time.time()
    overrides = [f"seed={seed}", f"stop.minutes={limit_s / 60:.2f}"]
    run_dir = rlp_train(EXPERIMENTS / "cartpole_ppo.yaml", out=out_dir, overrides=overrides)
    wall_s = time.time() - started
    summary = json.loads((run_dir / "trial_metrics.json").read_text())
    return {"return": summary["total_reward_ma"], "env_steps": summary["frame"], "wall_s": wall_s}


def run_rllib(seed: int, limit_s: float) -> dict:
    wait_until_ray_has_ended()
    started = time.time()
    arguments = [str(started), str(TARGET), str(seed), str(limit_s)]
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.rllib_cartpole_example", *arguments],
        cwd=REPO,
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
