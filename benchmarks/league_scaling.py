"""Iteration time and driver memory of a duel self-play league as the opponent pool grows.

    uv run python -m benchmarks.league_scaling [--pools 1 20 100] [--iterations 3]

Two ways to keep P frozen opponents, each measured in a fresh process per pool size (so peak
RSS is that configuration's own) with sampling and learning in the driver (no remote actors,
so the driver's RSS covers every copy of every module):

* `league`: rl_platform's league (`league_extension`): K=4 opponent slot modules, frozen
  members stored as safetensors and swapped into the slots between iterations (PFSP over all
  P members, so slots are redrawn and reloaded every iteration).
* `add_module`: RLlib's own pattern (ray/rllib/examples/multi_agent/utils/
  self_play_callback.py): one `Algorithm.add_module(...)` per snapshot, with every episode's
  opponent drawn uniformly from all P modules.

Both train through `rl_platform.train` (the loop and callbacks of `rlp train`, checkpoints
off) and set up in its `on_iteration` hook after the first iteration: the pool gets P
synthetic snapshots (main's weights plus noise, through `driver_league`) instead of training P
iterations, or the algorithm gets P modules. A second warm-up iteration lets the league plan
its slots over the full pool. Reported per row: the seconds the set-up took (`setup s`: adding
the P members; building the algorithm is the same for both and not counted), median seconds
per training iteration of the loop (hook to hook), driver RSS after the timed iterations and
peak RSS (both MiB), and for the league the ratio at the largest vs the smallest pool (goal
<= 1.05x).
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import EXPERIMENTS, REPO
from benchmarks.common.product import live_weights, start_ray
from rl_platform import load_spec, train
from rl_platform.rllib.league_callback import driver_league

SPEC = EXPERIMENTS / "duel_vs_based.yaml"
WARM_UP = 2
"""Iterations before timing: the first allocates, the second plans the slots over the pool."""
# Small batches keep 6 configurations to minutes on 2 cores; the model is the experiment's.
OVERRIDES = [
    "training.train_batch_size=600",
    "training.minibatch_size=300",
    "training.num_epochs=1",
    "env.envs_per_runner=2",
    "env.kwargs={max_steps: 60}",
    # Every game against the pool, as in the add_module variant (the experiment's own mix
    # plays mostly `based`).
    "league.opponent_mix.self_play=1.0",
    "league.opponent_mix.based=0.0",
    "league.opponent_mix.constant=0.0",
    "league.snapshot_every=null",
    "league.max_snapshots=null",
    "logging.wandb=off",
    "logging.tensorboard=false",
    "checkpoint.every_iterations=null",  # iteration time and memory, not checkpointing
    "checkpoint.at_end=false",
    "evaluation=null",
]
SNAPSHOT_NOISE = 0.01


def _rss_mib() -> float:
    """Current resident set size of this process (Linux /proc), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _synthetic(state: dict[str, np.ndarray], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        k: v + SNAPSHOT_NOISE * rng.standard_normal(v.shape).astype(v.dtype)
        for k, v in state.items()
    }


def _add_snapshots(algo: Any, pool: int) -> None:
    """P frozen members in the league's pool, as if main had been snapshot P times."""
    league, rng = driver_league(algo), np.random.default_rng(0)
    main = live_weights(algo)
    for _ in range(pool):
        league.add_snapshot(learner_id="main", weights=_synthetic(main, rng), env_steps=0)


def _uniform_opponent_fn(opponents: list[str]):
    def mapping(agent_id, episode, **kwargs):
        # Same pairing for both agents of an episode, from its id (RLlib example style).
        seed = int.from_bytes(str(getattr(episode, "id_", "x")).encode()[-8:], "little")
        main_side = seed % 2
        opponent = opponents[(seed // 2) % len(opponents)]
        return "main" if agent_id.endswith(str(main_side)) else opponent

    return mapping


def _add_modules(algo: Any, pool: int) -> None:
    """RLlib's pattern: one `Algorithm.add_module` per snapshot, every episode's opponent
    drawn uniformly from all of them."""
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    rng = np.random.default_rng(0)
    main = algo.get_module("main")
    opponents: list[str] = []
    for i in range(1, pool + 1):
        module_id = f"main_v{i}"
        opponents.append(module_id)
        algo.add_module(
            module_id=module_id,
            module_spec=RLModuleSpec.from_module(main),
            new_agent_to_module_mapping_fn=_uniform_opponent_fn(list(opponents)),
            new_should_module_be_updated=["main"],
        )
        weights = _synthetic(live_weights(algo), rng)
        algo.set_state({"learner_group": {"learner": {"rl_module": {module_id: weights}}}})


@dataclass
class Watch:
    """The `on_iteration` hook: set-up after iteration 1, timing from iteration 3 on."""

    approach: str
    pool: int
    setup_s: float = 0.0
    times: list[float] = field(default_factory=list)
    rss_mib: float = float("nan")
    last: float = 0.0

    def __call__(self, algo: Any, metrics: dict[str, float]) -> None:
        iteration = int(metrics["iteration"])
        if iteration == 1:
            started = time.perf_counter()
            (_add_snapshots if self.approach == "league" else _add_modules)(algo, self.pool)
            self.setup_s = time.perf_counter() - started
        elif iteration > WARM_UP:
            self.times.append(time.perf_counter() - self.last)
            self.rss_mib = _rss_mib()
        self.last = time.perf_counter()


def worker(approach: str, pool: int, iterations: int) -> dict[str, float]:
    start_ray(num_cpus=2)
    spec = load_spec(SPEC, overrides=[*OVERRIDES, f"stop.iterations={WARM_UP + iterations}"])
    if approach == "add_module":
        spec = spec.model_copy(update={"league": None})
    watch = Watch(approach, pool)
    with tempfile.TemporaryDirectory() as tmp:
        train(spec, out_dir=tmp, on_iteration=watch)
    return {
        "approach": approach,
        "pool": pool,
        "setup_s": watch.setup_s,
        "iter_s": statistics.median(watch.times),
        "rss_mib": watch.rss_mib,
        "peak_mib": _peak_mib(),
    }


def _run_worker(approach: str, pool: int, iterations: int, *, attempts: int = 2) -> dict:
    """Run one configuration in a fresh process (retried once: local Ray start-up can time out
    on a busy machine)."""
    args = [sys.executable, "-m", "benchmarks.league_scaling", "--worker", approach]
    args += ["--pool", str(pool)]
    args += ["--iterations", str(iterations)]
    for attempt in range(1, attempts + 1):
        out = subprocess.run(args, capture_output=True, text=True, cwd=REPO, check=False)
        if out.returncode == 0:
            return json.loads(out.stdout.strip().splitlines()[-1])
        sys.stderr.write(
            f"{approach} pool={pool} attempt {attempt} failed:\n{out.stderr[-3000:]}\n"
        )
    raise RuntimeError(f"{approach} pool={pool} failed {attempts} times")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pools", type=int, nargs="+", default=[1, 20, 100])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--approaches", nargs="+", default=["league", "add_module"])
    parser.add_argument("--worker", choices=["league", "add_module"], help=argparse.SUPPRESS)
    parser.add_argument("--pool", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        sys.stdout.write(json.dumps(worker(args.worker, args.pool, args.iterations)) + "\n")
        return
    rows = [_run_worker(a, p, args.iterations) for a in args.approaches for p in args.pools]
    header = (
        f"{'approach':<11} {'pool':>5} {'setup s':>8} {'iter s':>8} {'RSS MiB':>9} {'peak MiB':>9}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(
            f"{r['approach']:<11} {r['pool']:>5} {r['setup_s']:>8.1f} {r['iter_s']:>8.2f} "
            f"{r['rss_mib']:>9.0f} {r['peak_mib']:>9.0f}"
        )
    ours = {r["pool"]: r for r in rows if r["approach"] == "league"}
    if len(ours) >= 2:
        lo, hi = ours[min(ours)], ours[max(ours)]
        ratios = {k: hi[k] / lo[k] for k in ("iter_s", "rss_mib", "peak_mib")}
        lines.append(
            f"league {max(ours)} vs {min(ours)}: iteration time x{ratios['iter_s']:.2f}, "
            f"RSS x{ratios['rss_mib']:.3f}, peak x{ratios['peak_mib']:.3f} (goal <= 1.05)"
        )
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
