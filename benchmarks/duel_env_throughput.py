"""Throughput of the duel env in agent-steps per second on one CPU core.

    uv run python -m benchmarks.duel_env_throughput [--sizes 1 64 1024 4096] [--seconds 2]

Measures the vectorized `DuelCore` (auto-reset on, uniformly random actions drawn ahead of
time so the RNG is not timed) for each N, and the single-game PettingZoo wrapper. Each row
is the best of `--repeats` timed windows, by wall clock and per CPU-second of this process;
on a busy shared machine the CPU-time column is the one to compare.
"""

import os

# Pin BLAS/OpenMP pools to one thread before numpy loads: we measure single-core speed.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from benchmarks.common.output import cpu_model  # noqa: E402
from rl_platform.envs.duel import NUM_ACTIONS, DuelCore, DuelParallelEnv  # noqa: E402

_ACTION_POOL = 64


def _pin_to_one_core() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned"
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return f"pinned to cpu {core}"


def _best_rate(
    run_steps: Callable[[int], None], *, agent_steps: int, seconds: float, repeats: int
) -> tuple[float, float]:
    """Best agent-steps/s over `repeats` windows of about `seconds` each, by wall clock and
    by CPU time of this process (the latter is robust to other jobs on a shared machine)."""
    run_steps(5)  # warm-up
    start = time.perf_counter()
    run_steps(5)
    per_step = max((time.perf_counter() - start) / 5, 1e-7)
    steps = max(10, int(seconds / per_step))
    wall_rates, cpu_rates = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        run_steps(steps)
        wall_rates.append(agent_steps * steps / (time.perf_counter() - wall))
        cpu_rates.append(agent_steps * steps / max(time.process_time() - cpu, 1e-9))
    return max(wall_rates), max(cpu_rates)


def bench_core(num_games: int, *, seconds: float, repeats: int) -> tuple[float, float]:
    core = DuelCore(num_games, seed=0, auto_reset=True)
    pool = np.random.default_rng(0).integers(0, NUM_ACTIONS, size=(_ACTION_POOL, num_games, 2))
    counter = [0]

    def run_steps(steps: int) -> None:
        for _ in range(steps):
            core.step(pool[counter[0] % _ACTION_POOL])
            counter[0] += 1

    return _best_rate(run_steps, agent_steps=2 * num_games, seconds=seconds, repeats=repeats)


def bench_pettingzoo(*, seconds: float, repeats: int) -> tuple[float, float]:
    env = DuelParallelEnv(seed=0)
    env.reset()
    pool = np.random.default_rng(0).integers(0, NUM_ACTIONS, size=(_ACTION_POOL, 2)).tolist()
    counter = [0]

    def run_steps(steps: int) -> None:
        for _ in range(steps):
            a0, a1 = pool[counter[0] % _ACTION_POOL]
            counter[0] += 1
            env.step({"player_0": a0, "player_1": a1})
            if not env.agents:
                env.reset()

    return _best_rate(run_steps, agent_steps=2, seconds=seconds, repeats=repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 1024, 4096])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pinned = _pin_to_one_core()
    print(f"duel env throughput | {cpu_model()} x {os.cpu_count()} | {pinned}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {platform.python_version()}, numpy {np.__version__}, load avg {load:.1f}")
    print(f"{'env':<28}{'agent-steps/s (wall)':>22}{'agent-steps/CPU-s':>20}")
    for num_games in args.sizes:
        wall, cpu = bench_core(num_games, seconds=args.seconds, repeats=args.repeats)
        print(f"{f'DuelCore N={num_games}':<28}{wall:>22,.0f}{cpu:>20,.0f}")
    wall, cpu = bench_pettingzoo(seconds=args.seconds, repeats=args.repeats)
    print(f"{'DuelParallelEnv (1 game)':<28}{wall:>22,.0f}{cpu:>20,.0f}")


if __name__ == "__main__":
    main()
