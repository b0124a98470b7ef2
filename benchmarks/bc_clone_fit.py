"""How fast can the duel MLP clone `based`, and how good must the clone be to beat it?

    uv run python -m benchmarks.bc_clone_fit [--lr 3e-4 1e-3] [--iterations 30]
        [--offline-samples 200000 --offline-epochs 30]

Pure behaviour cloning, no PPO and no Ray, with the network of experiments/duel_bc_ppo.yaml
(MLP 256x256 tanh, 10 logits) and the learner's budget per iteration (8,000 labelled steps,
6 epochs of 2,000-sample minibatches, entropy bonus 0.01):

* online: each iteration labels 8,000 fresh steps of `based` vs `based` (one seat) and trains
  on them only, as the BC+PPO learner does; this is an upper bound for the BC term of
  BC + PPO (there, PPO's gradients share the same steps).
* offline: `--offline-samples` steps (both seats) trained for `--offline-epochs` epochs at
  lr 1e-3, to see what accuracy a clone needs to win.

Every few iterations it prints the held-out accuracy and the greedy clone's win rate against
`based` (200 games, half in each seat, draws 1/2), played as `rlp eval --seat alternate` plays
them (benchmarks/common/arena.py). Results are in docs/bc.md.
"""

import argparse
import time

import numpy as np
import torch
from torch import nn

from benchmarks.common.arena import duel_policy, greedy_net_policy, play
from rl_platform.envs.duel import DuelCore
from rl_platform.teachers import DUEL_ENV, scripted_act

BATCH, MINIBATCH, EPOCHS, ENTROPY_COEFF = 8000, 2000, 6, 0.01
BASED = scripted_act(env_id=DUEL_ENV, agent="based")


def based_games(steps: int, *, games: int, seed: int, both_seats: bool):
    """Yield (obs, based's action) chunks from `based` vs `based` games."""
    rng = np.random.default_rng(seed)
    core = DuelCore(games, seed=seed, auto_reset=True)
    obs = core.reset(seed=seed)
    per_step = games * (2 if both_seats else 1)
    for _ in range(steps // per_step):
        actions = np.stack([BASED(obs[:, 0], rng), BASED(obs[:, 1], rng)], axis=1)
        seats = slice(None) if both_seats else slice(0, 1)
        yield obs[:, seats].reshape(-1, obs.shape[-1]).copy(), actions[:, seats].reshape(-1)
        obs = core.step(actions).obs


def dataset(steps: int, *, games: int, seed: int, both_seats: bool):
    chunks = list(based_games(steps, games=games, seed=seed, both_seats=both_seats))
    obs, labels = zip(*chunks, strict=True)
    return torch.from_numpy(np.concatenate(obs)), torch.from_numpy(np.concatenate(labels))


def clone_net() -> nn.Module:
    return nn.Sequential(
        nn.Linear(64, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh(), nn.Linear(256, 10)
    )


def win_rate_vs_based(net: nn.Module, games: int = 200, seed: int = 12345) -> float:
    """The greedy clone's score against `based` (a draw counts 1/2)."""
    clone = greedy_net_policy("clone", net)
    return play(clone, duel_policy("scripted://duel/based"), games=games, seed=seed)["score"]


def train_pass(net, optimizer, obs, labels, *, entropy_coeff: float) -> None:
    for idx in torch.randperm(len(obs)).split(MINIBATCH):
        logits = net(obs[idx])
        entropy = torch.distributions.Categorical(logits=logits).entropy().mean()
        loss = nn.functional.cross_entropy(logits, labels[idx]) - entropy_coeff * entropy
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def accuracy(net, obs, labels) -> float:
    with torch.no_grad():
        return float((net(obs).argmax(-1) == labels).float().mean())


def online(lr: float, iterations: int, held_out) -> None:
    torch.manual_seed(0)
    net = clone_net()
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    stream = based_games(BATCH * iterations, games=8, seed=1, both_seats=False)
    for iteration in range(1, iterations + 1):
        chunks = [next(stream) for _ in range(BATCH // 8)]
        obs = torch.from_numpy(np.concatenate([c[0] for c in chunks]))
        labels = torch.from_numpy(np.concatenate([c[1] for c in chunks]))
        for _ in range(EPOCHS):
            train_pass(net, optimizer, obs, labels, entropy_coeff=ENTROPY_COEFF)
        if iteration % 3 == 0:
            print(
                f"online lr={lr:g} env_steps={iteration * BATCH:>7} "
                f"accuracy={accuracy(net, *held_out):.3f} win_rate={win_rate_vs_based(net):.3f}",
                flush=True,
            )


def offline(samples: int, epochs: int, held_out) -> None:
    torch.manual_seed(0)
    net = clone_net()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    obs, labels = dataset(samples, games=64, seed=0, both_seats=True)
    for epoch in range(1, epochs + 1):
        train_pass(net, optimizer, obs, labels, entropy_coeff=0.0)
        if epoch % 5 == 0:
            print(
                f"offline samples={samples} epoch={epoch:>2} "
                f"accuracy={accuracy(net, *held_out):.3f} win_rate={win_rate_vs_based(net):.3f}",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lr", type=float, nargs="+", default=[3e-4, 1e-3])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--offline-samples", type=int, default=200_000)
    parser.add_argument("--offline-epochs", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(2)
    start = time.perf_counter()
    held_out = dataset(20_000, games=64, seed=99, both_seats=True)
    for lr in args.lr:
        online(lr, args.iterations, held_out)
    if args.offline_epochs:
        offline(args.offline_samples, args.offline_epochs, held_out)
    print(f"wall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
