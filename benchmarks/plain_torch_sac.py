"""Plain-PyTorch SAC on one gymnasium env: the yardstick for our SAC's env steps/s (no Ray).

    uv run python -m benchmarks.plain_torch_sac --env Hopper-v5 --steps 20000 \
        --learning-starts 10000

Haarnoja et al. 2018 ("Soft Actor-Critic Algorithms and Applications", arXiv:1812.05905), with
the settings of experiments/mujoco_hopper_sac.yaml: two 256-unit ReLU layers for the actor and
each of two critics, Adam 3e-4 for all three and the temperature (target entropy
-action_dim), batch 256, gamma 0.99, tau 0.005, a uniform replay of 1e6, one update per env
step after `--learning-starts` uniformly random steps. The critics regress on the paper's
squared error (RLlib uses Huber, rl_platform/losses/sac.py); the actor acts in [-1, 1] with
RLlib's log-std clamp [-5, 2], scaled to the env's bounds outside the policy. Prints the
learning phase's env steps/s and the mean return of the last 10 episodes (issue #57).
"""

import argparse
import copy
import math
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

HIDDEN, LR, BATCH, GAMMA, TAU, CAPACITY = 256, 3e-4, 256, 0.99, 0.005, 1_000_000


def mlp(in_dim: int, out_dim: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(in_dim, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
        nn.Linear(HIDDEN, out_dim),
    )  # fmt: skip


def act(actor: nn.Module, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A reparameterized tanh-Gaussian action in [-1, 1] and its log-probability."""
    mean, log_std = actor(obs).chunk(2, dim=-1)
    std = log_std.clamp(-5.0, 2.0).exp()
    u = mean + std * torch.randn_like(mean)
    logp = (-((u - mean) ** 2) / (2 * std**2) - std.log() - 0.5 * math.log(2 * math.pi)).sum(-1)
    logp -= (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)  # log(1 - tanh(u)^2)
    return torch.tanh(u), logp


class Replay:
    """Preallocated numpy rows, overwritten oldest first, sampled uniformly."""

    def __init__(self, obs_dim: int, action_dim: int, rng: np.random.Generator) -> None:
        self.obs = np.zeros((CAPACITY, obs_dim), np.float32)
        self.next_obs = np.zeros((CAPACITY, obs_dim), np.float32)
        self.actions = np.zeros((CAPACITY, action_dim), np.float32)
        self.rewards = np.zeros(CAPACITY, np.float32)
        self.terminated = np.zeros(CAPACITY, np.float32)
        self.rng, self.cursor, self.size = rng, 0, 0

    def add(self, obs, action, reward, next_obs, terminated) -> None:
        i = self.cursor
        self.obs[i], self.actions[i], self.rewards[i] = obs, action, reward
        self.next_obs[i], self.terminated[i] = next_obs, terminated
        self.cursor, self.size = (i + 1) % CAPACITY, min(self.size + 1, CAPACITY)

    def sample(self) -> list[torch.Tensor]:
        rows = self.rng.integers(0, self.size, BATCH)
        fields = (self.obs, self.actions, self.rewards, self.next_obs, self.terminated)
        return [torch.from_numpy(field[rows]) for field in fields]


class SAC:
    def __init__(self, obs_dim: int, action_dim: int) -> None:
        self.actor = mlp(obs_dim, 2 * action_dim)
        self.critics = nn.ModuleList([mlp(obs_dim + action_dim, 1) for _ in range(2)])
        self.targets = copy.deepcopy(self.critics).requires_grad_(False)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = -float(action_dim)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=LR)
        self.critic_opt = torch.optim.Adam(self.critics.parameters(), lr=LR)
        self.alpha_opt = torch.optim.Adam([self.log_alpha], lr=LR)

    def q(self, nets: nn.ModuleList, obs: torch.Tensor, action: torch.Tensor) -> list:
        return [net(torch.cat([obs, action], -1)).squeeze(-1) for net in nets]

    def update(self, obs, actions, rewards, next_obs, terminated) -> None:
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            next_action, next_logp = act(self.actor, next_obs)
            next_q = torch.min(*self.q(self.targets, next_obs, next_action))
            target = rewards + GAMMA * (1 - terminated) * (next_q - alpha * next_logp)
        critic_loss = sum(0.5 * F.mse_loss(q, target) for q in self.q(self.critics, obs, actions))
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()
        action, logp = act(self.actor, obs)
        actor_loss = (alpha * logp - torch.min(*self.q(self.critics, obs, action))).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()
        alpha_loss = -(self.log_alpha * (logp.detach() + self.target_entropy)).mean()
        self.alpha_opt.zero_grad()
        alpha_loss.backward()
        self.alpha_opt.step()
        with torch.no_grad():
            for online, target in zip(
                self.critics.parameters(), self.targets.parameters(), strict=True
            ):
                target.lerp_(online, TAU)


def run(args: argparse.Namespace) -> None:
    torch.manual_seed(args.seed)
    env = gym.make(args.env)
    env.action_space.seed(args.seed)
    low, high = env.action_space.low, env.action_space.high
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    sac = SAC(obs_dim, action_dim)
    replay = Replay(obs_dim, action_dim, np.random.default_rng(args.seed))
    obs, _ = env.reset(seed=args.seed)
    returns, episode_return, started = [], 0.0, None
    for step in range(args.steps):
        if step < args.learning_starts:
            action = (env.action_space.sample() - low) / (high - low) * 2 - 1
        else:
            with torch.no_grad():
                action = act(sac.actor, torch.as_tensor(obs, dtype=torch.float32))[0].numpy()
        next_obs, reward, terminated, truncated, _ = env.step(low + (action + 1) * (high - low) / 2)
        replay.add(obs, action, reward, next_obs, float(terminated))
        episode_return += float(reward)
        obs = next_obs
        if terminated or truncated:
            returns.append(episode_return)
            obs, episode_return = env.reset()[0], 0.0
        if step >= args.learning_starts:
            started = started or time.perf_counter()
            sac.update(*replay.sample())
        if args.log_every and (step + 1) % args.log_every == 0:
            last = np.mean(returns[-10:])
            print(f"{step + 1} env steps: mean return of the last 10 episodes {last:.1f}")
    learning = args.steps - args.learning_starts
    seconds = time.perf_counter() - started if started else float("nan")
    print(f"plain torch SAC on {args.env}, {args.threads} torch thread(s), seed {args.seed}")
    print(f"learning phase: {learning} env steps, {learning / seconds:.1f} env steps/s")
    last = returns[-10:]
    print(f"episodes: {len(returns)}, mean return of the last {len(last)}: {np.mean(last):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="Hopper-v5")
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--learning-starts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--log-every", type=int, default=0, help="print the curve every N steps")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run(args)


if __name__ == "__main__":
    main()
