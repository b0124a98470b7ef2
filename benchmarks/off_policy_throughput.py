"""Off-policy throughput (issue #57): our SAC/DQN fast path vs RLlib's path vs a plain loop.

    uv run python -m benchmarks.off_policy_throughput --algo sac [--steps 20000]
        [--learning-starts 10000] [--rounds 3] [--threads 1] [--seed 0] [--out FILE.json]

One invocation, side by side, the three arms alternating in every round (a b c, a b c, ...,
as `benchmarks/common/output.py`'s `side_by_side`), each run a fresh process on this machine:

(a) `array`: `rlp train SPEC --set training.learner=array` (docs/off_policy.md),
(b) `rllib`: the same spec with `training.learner=rllib` (RLlib's SAC/DQN training step and
    episode replay buffer),
(c) `plain`: `benchmarks/plain_torch_sac.py` or `plain_torch_dqn.py`, no Ray.

`--algo sac`: Hopper-v5 with experiments/mujoco_hopper_sac.yaml; `--algo dqn`: CartPole-v1
with experiments/cartpole_dqn.yaml. The same settings in every arm: the plain loops hold the
specs' values (checked here), the same `--steps`, `--learning-starts`, seed and torch thread
count (`resources.torch_threads` / `--threads`), no checkpoints, no return stop; for DQN the
same updates per env step (the spec's `update_rate`, passed to both `rlp` arms as
`training.training_intensity` so that RLlib's round-robin weights give it too, and to the plain
loop as `--updates`) and uniform replay (the plain loop's; the spec's is prioritized). RLlib's
SAC critic is a two-stream net, ours and the plain loop's the paper's MLP (docs/off_policy.md).

Only the learning phase is measured: env steps/s after `num_steps_sampled_before_learning_
starts`. For (a) and (b) from metrics.jsonl: the rows whose iteration starts at or after it,
their env steps over their `perf/iteration_s` (less checkpoint and evaluation time, none
here); for (c) the loop's own print. Each round gives one rate per arm and the ratios
array/plain and array/rllib, reported as median, min and max over the rounds; each run's
process seconds (Ray's start included, the wait below not) are printed beside. Before each
`rlp` arm the script waits until no Ray process is left on the machine (at most 30 s:
another session's Ray is not ours to wait for), so no arm starts beside the previous one's
teardown.
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import plain_torch_dqn, plain_torch_sac
from benchmarks.common import EXPERIMENTS, REPO, machine_line, ratio_line, write_json
from benchmarks.common.processes import wait_until_ray_has_ended
from benchmarks.common.product import QUIET, rlp_train
from rl_platform.spec import ExperimentSpec, load_spec
from rl_platform.spec.training import DQNTraining, SACTraining
from rl_platform.storage.metrics_rows import read_metrics


@dataclass(frozen=True)
class Recipe:
    spec: Path
    plain_module: str
    steps: int
    learning_starts: int


RECIPES = {
    "sac": Recipe(
        EXPERIMENTS / "mujoco_hopper_sac.yaml", "benchmarks.plain_torch_sac", 20_000, 10_000
    ),
    "dqn": Recipe(EXPERIMENTS / "cartpole_dqn.yaml", "benchmarks.plain_torch_dqn", 50_000, 1_000),
}
"""Spec, plain loop, default `--steps` and `--learning-starts` (the plain loops' defaults)."""
ARMS = ("array", "rllib", "plain")
RATIOS = {"array/plain": ("array", "plain"), "array/rllib": ("array", "rllib")}
PLAIN_LINE = re.compile(r"learning phase: (\d+) env steps, ([\d.]+) env steps/s")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--algo", choices=RECIPES, default="sac")
    parser.add_argument("--steps", type=int, default=None, help="env steps per run")
    parser.add_argument("--learning-starts", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads, every arm")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)
    recipe = RECIPES[args.algo]
    args.steps = recipe.steps if args.steps is None else args.steps
    if args.learning_starts is None:
        args.learning_starts = recipe.learning_starts
    if not 0 <= args.learning_starts < args.steps or args.rounds < 1 or args.threads < 1:
        parser.error("need 0 <= --learning-starts < --steps, --rounds >= 1, --threads >= 1")
    return args


def plain_settings(spec: ExperimentSpec) -> list[str]:
    """The plain loop's extra arguments; refuses a spec whose values the loop does not hold."""
    held, extra = _sac_held(spec) if spec.algo == "SAC" else _dqn_held(spec)
    differ = {name: pair for name, pair in held.items() if pair[0] != pair[1]}
    if differ:
        raise SystemExit(f"{spec.name}: the plain loop holds other values (spec, plain): {differ}")
    return extra


def _sac_held(spec: ExperimentSpec) -> tuple[dict[str, tuple], list[str]]:
    """(spec value, plain_torch_sac's) by name; the loop's arguments."""
    t, p = spec.training, plain_torch_sac
    assert isinstance(t, SACTraining)
    held = {
        "batch": (t.train_batch_size, p.BATCH),
        "lr": ((t.actor_lr, t.critic_lr, t.alpha_lr), (p.LR,) * 3),
        "gamma": (t.gamma, p.GAMMA),
        "tau": (t.tau, p.TAU),
        "hidden": (list(spec.model.hidden), [p.HIDDEN] * 2),
        "initial_alpha": (t.initial_alpha, 1.0),
        "envs": (spec.env.envs_per_runner, 1),
        "replay": ((t.replay, t.replay_capacity), ("uniform", p.CAPACITY)),
    }
    return held, ["--env", spec.env.id]


def _dqn_held(spec: ExperimentSpec) -> tuple[dict[str, tuple], list[str]]:
    """(spec value, plain_torch_dqn's) by name; the loop's arguments (its updates per round
    of `NUM_ENVS * N_STEP` env steps: the spec's update rate)."""
    t, p = spec.training, plain_torch_dqn
    assert isinstance(t, DQNTraining)
    held = {
        "batch": (t.train_batch_size, p.BATCH),
        "lr": (t.lr, p.LR),
        "gamma": (t.gamma, p.GAMMA),
        "n_step": (t.n_step, p.N_STEP),
        "envs": (spec.env.envs_per_runner, p.NUM_ENVS),
        "target": (t.target_network_update_freq, p.TARGET_EVERY),
        "epsilon": ((t.epsilon_timesteps, t.final_epsilon), (p.EPSILON_STEPS, p.FINAL_EPSILON)),
        "capacity": (t.replay_capacity, p.CAPACITY),
        "hidden": (list(spec.model.hidden), [64, 64]),
    }
    updates = dqn_update_rate(spec) * p.NUM_ENVS * p.N_STEP
    if abs(updates - round(updates)) > 1e-9 or round(updates) < 1:
        raise SystemExit(f"the plain DQN updates a whole number of times a round, not {updates}")
    return held, ["--updates", str(round(updates))]


def dqn_update_rate(spec: ExperimentSpec) -> float:
    t = spec.training
    assert isinstance(t, DQNTraining)
    return t.update_rate(spec.env.envs_per_runner)


def spec_overrides(args: argparse.Namespace) -> list[str]:
    """What every `rlp` arm sets: the budget, no checkpoint, no return stop, the threads."""
    overrides = [*QUIET, f"seed={args.seed}", f"stop.env_steps={args.steps}"]
    overrides += ["stop.return_mean=null", "checkpoint.at_end=false"]
    overrides += ["checkpoint.every_minutes=null", "checkpoint.every_iterations=null"]
    overrides += [f"training.num_steps_sampled_before_learning_starts={args.learning_starts}"]
    overrides += [f"resources.torch_threads={args.threads}"]
    if args.algo == "dqn":
        spec = load_spec(RECIPES["dqn"].spec, overrides=overrides)
        intensity = dqn_update_rate(spec) * spec.training.train_batch_size
        overrides += ["training.replay=uniform", f"training.training_intensity={intensity}"]
    return overrides


def learning_phase(run_dir: Path, learning_starts: int) -> dict[str, float]:
    """Env steps and seconds of the iterations that started at or after `learning_starts`."""
    steps = seconds = 0.0
    previous = 0
    for row in read_metrics(run_dir):
        env_steps = int(row["env_steps"])
        if previous >= learning_starts:
            steps += env_steps - previous
            seconds += row["perf/iteration_s"] - row.get("perf/checkpoint_s", 0.0)
            seconds -= row.get("perf/eval_s", 0.0)
        previous = env_steps
    if steps == 0:
        raise SystemExit(f"{run_dir}: no whole iteration after learning started")
    return {"env_steps": steps, "seconds": seconds, "env_steps_per_s": steps / seconds}


def rlp_arm(learner: str, args: argparse.Namespace, out: Path) -> dict[str, float]:
    wait_until_ray_has_ended()
    spec_path = RECIPES[args.algo].spec
    overrides = [*spec_overrides(args), f"training.learner={learner}"]
    started = time.perf_counter()
    run_dir = rlp_train(spec_path, out=out / learner, overrides=overrides)
    process_s = time.perf_counter() - started
    return learning_phase(run_dir, args.learning_starts) | {"process_s": process_s}


def plain_arm(args: argparse.Namespace) -> dict[str, float]:
    recipe = RECIPES[args.algo]
    command = [sys.executable, "-m", recipe.plain_module, "--steps", str(args.steps)]
    command += ["--learning-starts", str(args.learning_starts), "--seed", str(args.seed)]
    command += ["--threads", str(args.threads), *plain_settings(load_spec(recipe.spec))]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, check=True, capture_output=True, text=True)
    process_s = time.perf_counter() - started
    found = PLAIN_LINE.search(done.stdout)
    if found is None:
        raise SystemExit(f"the plain loop printed no learning phase:\n{done.stdout}")
    rate = {"env_steps": float(found[1]), "env_steps_per_s": float(found[2])}
    return rate | {"process_s": process_s}


def measure(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Every arm once per round, the arms alternating within each round (a drift in the
    machine's speed hits them alike); each run's learning-phase rate."""
    runs: dict[str, Callable[[], dict[str, float]]] = {
        "array": lambda: rlp_arm("array", args, out),
        "rllib": lambda: rlp_arm("rllib", args, out),
        "plain": lambda: plain_arm(args),
    }
    results: dict[str, list[dict[str, float]]] = {arm: [] for arm in ARMS}
    for _ in range(args.rounds):
        for arm in ARMS:
            results[arm].append(runs[arm]())
    ratios = {name: _per_round(results[a], results[b]) for name, (a, b) in RATIOS.items()}
    return {"arms": results, "ratios": ratios}


def _per_round(top: list[dict[str, float]], bottom: list[dict[str, float]]) -> list[float]:
    pairs = zip(top, bottom, strict=True)
    return [a["env_steps_per_s"] / b["env_steps_per_s"] for a, b in pairs]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    print(f"start: {machine_line()}")
    with tempfile.TemporaryDirectory() as tmp:
        report = measure(args, Path(tmp))
    print(
        f"{args.algo}: learning-phase env steps/s, {args.steps} env steps per run, learning "
        f"from {args.learning_starts}, {args.threads} torch thread(s), seed {args.seed}"
    )
    for arm in ARMS:
        for number, got in enumerate(report["arms"][arm], start=1):
            print(
                f"  round {number} {arm:>5}: {got['env_steps_per_s']:>9,.1f} env steps/s "
                f"({got['env_steps']:,.0f} env steps learning, process {got['process_s']:.0f} s)"
            )
    for name, values in report["ratios"].items():
        print("  " + ratio_line(name, values, unit="rounds"))
    print(f"end: {machine_line()}")
    if args.out is not None:
        write_json(args.out, {"args": vars(args) | {"out": None}, **report})


if __name__ == "__main__":
    main()
