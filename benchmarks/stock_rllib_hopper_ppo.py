"""Stock RLlib PPO on Hopper-v5 with experiments/mujoco_ppo.yaml's algorithm settings: the
yardstick arm of `benchmarks/stock_rllib_overhead.py`.

    python -m benchmarks.stock_rllib_hopper_ppo ENV_STEPS SEED

RLlib without rl_platform on purpose (no rl_platform import): its own `ray.init`, its own
`algo.train()` loop. The same PPOConfig settings as the spec: 1 env in the driver, 2,048 steps
per iteration, minibatch 64, 10 epochs, lr 3e-4 annealed to 0 at 999,424 steps, gamma 0.99,
lambda 0.95, clip 0.2, no value clip, value loss weight 0.25, grad clip 0.5, entropy 0, tanh
64x64 separate networks, free log std, MeanStdFilter on observations. What stock RLlib lacks
is left out: the reward scaling (rl_platform's learner connector; a few microseconds per
step), so the arms do the same arithmetic apart from it. Prints one `RESULT {json}` line.
"""

import json
import sys
import time

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module.mean_std_filter import MeanStdFilter
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig


def config(seed: int) -> PPOConfig:
    return (
        PPOConfig()
        .environment("Hopper-v5")
        .env_runners(
            num_env_runners=0,
            num_envs_per_env_runner=1,
            env_to_module_connector=lambda env, spaces=None, device=None: MeanStdFilter(),
        )
        .training(
            lr=[[0, 3.0e-4], [999424, 0.0]],
            gamma=0.99,
            lambda_=0.95,
            train_batch_size_per_learner=2048,
            minibatch_size=64,
            num_epochs=10,
            clip_param=0.2,
            vf_clip_param=float("inf"),
            vf_loss_coeff=0.25,  # CleanRL's vf_coef 0.5 times its loss's own 0.5
            entropy_coeff=0.0,
            grad_clip=0.5,
        )
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=[64, 64],
                fcnet_activation="tanh",
                vf_share_layers=False,
                free_log_std=True,
            )
        )
        .debugging(seed=seed, log_level="WARN")
    )


def run(env_steps: int, seed: int) -> dict[str, float]:
    started = time.time()
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    algo = config(seed).build_algo()
    loop_started, steps = time.time(), 0
    while steps < env_steps:
        result = algo.train()
        steps = int(result["num_env_steps_sampled_lifetime"])
    loop_s = time.time() - loop_started
    ret = result["env_runners"].get("episode_return_mean", float("nan"))
    return {
        "env_steps": steps,
        "train_s": loop_s,
        "env_steps_per_s": steps / loop_s,
        "process_s": time.time() - started,
        "return": ret,
    }


if __name__ == "__main__":
    import torch

    torch.set_num_threads(1)  # as the spec's resources.torch_threads
    outcome = run(int(sys.argv[1]), int(sys.argv[2]))
    sys.stdout.write("RESULT " + json.dumps(outcome) + "\n")
