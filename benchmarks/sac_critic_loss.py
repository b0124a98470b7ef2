"""SAC's critic loss on a MuJoCo env, Huber (RLlib's) against the squared error (the paper's):
the learning curve and the critics' mean Q of our pure SAC pieces (no Ray).

    uv run python -m benchmarks.sac_critic_loss --loss huber --steps 60000 --seed 0
    uv run python -m benchmarks.sac_critic_loss --loss mse --steps 60000 --seed 0

`SACStep`, `ReplayStore` and `TransitionCollector` as the array path runs them, with the
settings of experiments/mujoco_hopper_sac.yaml (two 256-unit layers, Adam 3e-4, batch 256,
one update per env step after `--learning-starts` uniform random steps, 1 torch thread).
Every `--log-every` env steps it prints the mean return of the last 100 episodes and the
means of the updates since the last print: Q of the policy's action, alpha, the critic loss.
docs/off_policy.md, "The critics' loss", has what it measured.
"""

import argparse

import gymnasium as gym
import torch

from rl_platform.learners.sac_step import SACSettings, SACStep, make_sac_nets
from rl_platform.replay.layout import layout_for
from rl_platform.replay.store import ReplayStore
from rl_platform.sampling.off_policy_acting import SACActing
from rl_platform.sampling.transition_collector import TransitionCollector

BATCH, CAPACITY, HIDDEN = 256, 1_000_000, [256, 256]


def run(args: argparse.Namespace) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    env = gym.make(args.env)
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    nets = make_sac_nets(obs_dim=obs_dim, action_dim=action_dim, hidden=HIDDEN)
    step = SACStep(
        nets,
        SACSettings(critic_loss=args.loss),
        generator=torch.Generator().manual_seed(args.seed),
    )
    store = ReplayStore(
        layout=layout_for(env.observation_space, env.action_space),
        capacity=CAPACITY,
        num_envs=1,
        device="cpu",
        seed=args.seed,
    )
    acting = SACActing(
        nets.actor,
        low=env.action_space.low,
        high=env.action_space.high,
        generator=torch.Generator().manual_seed(args.seed + 1),
    )
    collector = TransitionCollector(envs=[env], store=store, acting=acting, seeds=[args.seed])
    print(f"SAC on {args.env}, critic loss {args.loss}, seed {args.seed}")
    for env_steps in range(1, args.steps + 1):
        collector.step(random=env_steps <= args.learning_starts)
        if env_steps >= args.learning_starts:
            step(store.sample(BATCH))
        if env_steps % args.log_every == 0:
            _report(env_steps, collector, step.metrics.read())


def _report(env_steps: int, collector: TransitionCollector, updates: dict[str, float]) -> None:
    means = collector.episode_means()
    line = f"{env_steps} env steps: return {means[0]:.1f}" if means else f"{env_steps} env steps"
    if updates:
        line += (
            f" | q {updates['sac/q_mean']:.1f} | alpha {updates['sac/alpha']:.3f}"
            f" | critic loss {updates['loss/critic']:.2f}"
        )
    print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Hopper-v5")
    parser.add_argument("--loss", choices=("huber", "mse"), default="mse")
    parser.add_argument("--steps", type=int, default=60_000)
    parser.add_argument("--learning-starts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=5_000)
    run(parser.parse_args())


if __name__ == "__main__":
    main()
