"""Plain-PyTorch DQN on CartPole-v1: the yardstick for our DQN's env steps/s (no Ray).

    uv run python -m benchmarks.plain_torch_dqn --steps 50000

The settings of experiments/cartpole_dqn.yaml with RLlib's DQN defaults for the rest: 4 envs,
double Q, a dueling head on two 64-unit ReLU layers, 3-step returns, Huber loss, Adam 5e-4
(eps 1e-8), batch 32, gamma 0.99, no gradient clip (`training.grad_clip` is unset), a uniform
replay of 50000 (RLlib's default for the spec is prioritized; uniform keeps this plain),
epsilon from 1.0 to 0.02 over 10000 env steps, learning after 1000, and the target copied
every 500 env steps. RLlib's iteration samples `n_step` steps of each env (12 env steps) and
then updates once, and so does this (`--updates` more times). At that ratio CartPole learns
slowly (a mean return of 42 after 40k env steps, seed 0; with `--updates 3`, 271). Prints
the learning phase's env steps/s and the mean return of the last 10 episodes (issue #57).
"""

import argparse
import copy
import time
from collections import deque

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

NUM_ENVS, N_STEP, GAMMA, LR, BATCH, CAPACITY = 4, 3, 0.99, 5e-4, 32, 50_000
TARGET_EVERY, EPSILON_STEPS, FINAL_EPSILON = 500, 10_000, 0.02


class DuelingQ(nn.Module):
    def __init__(self, obs_dim: int, num_actions: int) -> None:
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU())
        self.advantage, self.value = nn.Linear(64, num_actions), nn.Linear(64, 1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        features = self.trunk(obs)
        advantages = self.advantage(features)
        return advantages - advantages.mean(-1, keepdim=True) + self.value(features)


class Replay:
    """n-step transitions (discounted reward, bootstrap obs, its discount) in numpy rows."""

    def __init__(self, obs_dim: int, rng: np.random.Generator) -> None:
        self.obs = np.zeros((CAPACITY, obs_dim), np.float32)
        self.next_obs = np.zeros((CAPACITY, obs_dim), np.float32)
        self.actions = np.zeros(CAPACITY, np.int64)
        self.returns = np.zeros(CAPACITY, np.float32)
        self.discounts = np.zeros(CAPACITY, np.float32)  # gamma^n, 0 when terminated
        self.rng, self.cursor, self.size = rng, 0, 0

    def add(self, window: deque, next_obs: np.ndarray, terminated: bool) -> None:
        """The oldest step of `window` [(obs, action, reward)] with what followed it."""
        i = self.cursor
        self.obs[i], self.actions[i] = window[0][0], window[0][1]
        self.returns[i] = sum(GAMMA**k * step[2] for k, step in enumerate(window))
        self.next_obs[i] = next_obs
        self.discounts[i] = 0.0 if terminated else GAMMA ** len(window)
        self.cursor, self.size = (i + 1) % CAPACITY, min(self.size + 1, CAPACITY)

    def sample(self) -> list[torch.Tensor]:
        rows = self.rng.integers(0, self.size, BATCH)
        fields = (self.obs, self.actions, self.returns, self.next_obs, self.discounts)
        return [torch.from_numpy(field[rows]) for field in fields]


def update(q: nn.Module, target: nn.Module, optimizer, batch: list[torch.Tensor]) -> None:
    obs, actions, returns, next_obs, discounts = batch
    with torch.no_grad():
        best = q(next_obs).argmax(-1, keepdim=True)  # double Q: online picks, target values
        y = returns + discounts * target(next_obs).gather(-1, best).squeeze(-1)
    loss = F.huber_loss(q(obs).gather(-1, actions[:, None]).squeeze(-1), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def env_step(env, window: deque, replay: Replay, obs, action: int) -> tuple:
    """Step one env; store the transitions whose n-step window is complete or cut."""
    next_obs, reward, terminated, truncated, _ = env.step(action)
    window.append((obs, action, float(reward)))
    if len(window) == N_STEP:
        replay.add(window, next_obs, bool(terminated))
        window.popleft()
    if terminated or truncated:
        while window:  # the episode's last steps get shorter windows
            replay.add(window, next_obs, bool(terminated))
            window.popleft()
        return env.reset()[0], float(reward), True
    return next_obs, float(reward), False


def run(args: argparse.Namespace) -> None:
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    envs = [gym.make("CartPole-v1") for _ in range(NUM_ENVS)]
    obs = [env.reset(seed=args.seed + i)[0] for i, env in enumerate(envs)]
    windows = [deque() for _ in envs]
    q = DuelingQ(envs[0].observation_space.shape[0], int(envs[0].action_space.n))
    target = copy.deepcopy(q).requires_grad_(False)
    optimizer = torch.optim.Adam(q.parameters(), lr=LR, eps=1e-8)
    replay = Replay(envs[0].observation_space.shape[0], rng)
    returns, running, steps, synced, started = [], [0.0] * NUM_ENVS, 0, 0, None
    while steps < args.steps:
        for _ in range(N_STEP):
            epsilon = max(FINAL_EPSILON, 1.0 - (1.0 - FINAL_EPSILON) * steps / EPSILON_STEPS)
            with torch.no_grad():
                greedy = q(torch.as_tensor(np.stack(obs))).argmax(-1).tolist()
            for i, env in enumerate(envs):
                action = int(rng.integers(2)) if rng.random() < epsilon else greedy[i]
                obs[i], reward, done = env_step(env, windows[i], replay, obs[i], action)
                running[i] += reward
                if done:
                    returns.append(running[i])
                    running[i] = 0.0
            steps += NUM_ENVS
        if steps >= args.learning_starts:
            started = started or (time.perf_counter(), steps)
            for _ in range(args.updates):
                update(q, target, optimizer, replay.sample())
            if steps - synced >= TARGET_EVERY:
                target.load_state_dict(q.state_dict())
                synced = steps
    report(args, returns, started, steps)


def report(args: argparse.Namespace, returns: list[float], started, steps: int) -> None:
    print(f"plain torch DQN on CartPole-v1, {args.threads} torch thread(s), seed {args.seed}")
    if started:
        seconds, learning = time.perf_counter() - started[0], steps - started[1]
        print(f"learning phase: {learning} env steps, {learning / seconds:.1f} env steps/s")
    last = returns[-10:]
    print(f"episodes: {len(returns)}, mean return of the last {len(last)}: {np.mean(last):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--learning-starts", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--updates", type=int, default=1, help="updates per 12 env steps")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run(args)


if __name__ == "__main__":
    main()
