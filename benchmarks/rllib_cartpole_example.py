"""RLlib's own tuned CartPole PPO example, run to a target return: the yardstick of
`benchmarks/cartpole_time_to_solve.py`.

    uv run python -m benchmarks.rllib_cartpole_example STARTED TARGET SEED LIMIT_S

Stock RLlib on purpose: it starts its own Ray and runs its own `algo.train()` loop, because
what it measures is RLlib without rl_platform (PPOConfig with lr=3e-4, num_epochs=6,
vf_loss_coeff=0.01 and everything else default: 2 remote env runners, batch 4000, minibatch
128). `STARTED` is the caller's `time.time()` before it started this process, so the wall time
includes starting Python and Ray. Prints one `RESULT {json}` line.
"""

import json
import sys
import time

import ray
from ray.rllib.algorithms.ppo import PPOConfig


def solve(*, started: float, target: float, seed: int, limit_s: float) -> dict[str, float]:
    ray.init(address="local", include_dashboard=False)
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .training(lr=3e-4, num_epochs=6, vf_loss_coeff=0.01)
        .debugging(seed=seed)
    )
    algo = config.build_algo()
    ret, steps = float("nan"), 0
    while time.time() - started < limit_s:
        result = algo.train()
        ret = result["env_runners"].get("episode_return_mean", float("nan"))
        steps = int(result["num_env_steps_sampled_lifetime"])
        if ret >= target:
            break
    return {"return": ret, "env_steps": steps, "wall_s": time.time() - started}


if __name__ == "__main__":
    started, target, seed, limit_s = sys.argv[1:5]
    outcome = solve(
        started=float(started), target=float(target), seed=int(seed), limit_s=float(limit_s)
    )
    sys.stdout.write("RESULT " + json.dumps(outcome) + "\n")
