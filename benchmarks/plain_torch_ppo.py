"""Plain-torch PPO on the vectorized duel: the throughput ceiling for our RLlib runs (no Ray).

    uv run python -m benchmarks.plain_torch_ppo [--env-steps 40000] [--num-games 64]

One process does everything: `DuelVectorGame(num_games)` is stepped as one numpy call, the
learner (`main`) plays seat 0 of every game and the scripted `based` agent plays seat 1 (a
fixed seat keeps the loop simple; the duel is mirror-symmetric, so this costs no generality
for a throughput ceiling). The algorithm and network mirror what `experiments/duel_vs_based.yaml`
asks of RLlib, with the RLlib PPO defaults from `rl_platform/spec/training.py`:

* network: RLlib's `DefaultPPOTorchRLModule` with `fcnet_hiddens=[256, 256]`, tanh,
  `vf_share_layers=False` and empty `head_fcnet_hiddens` (ray/rllib/algorithms/ppo/
  ppo_catalog.py): an actor MLP 64-256-256 then a linear 256-10 logits head, a critic MLP
  64-256-256 then a linear 256-1 head, PyTorch's default initialisation (RLlib's default
  when no initializer is configured);
* sampling runs the actor only (RLlib's env runners hold an `inference_only` module); the
  values are computed in one batched pass before the update, as RLlib's GAE connector does;
* GAE (ray/rllib/connectors/learner/general_advantage_estimation.py): bootstrap from the
  value of the next observation at fragment ends and at truncation, none at termination;
  advantages standardized over the whole batch with `max(1e-4, std)`;
* loss (ray/rllib/algorithms/ppo/torch/ppo_torch_learner.py): clipped surrogate, squared
  value error clamped at `vf_clip` (RLlib's `vf_clip_param` semantics, not CleanRL's
  clipped value prediction), entropy bonus; Adam; `num_epochs` passes over shuffled
  minibatches; global-norm gradient clipping only when `grad_clip` is set.

Env steps count game frames: one vector step is `num_games` env steps.
"""

import argparse
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from benchmarks.common import compute_gae, standardize
from rl_platform.envs.duel import NUM_ACTIONS, OBS_SIZE
from rl_platform.envs.duel.vector_game import DuelVectorGame
from rl_platform.envs.vector_game import DRAW, VectorStep
from rl_platform.teachers import DUEL_ENV, scripted_act

MAIN_SEAT = 0
"""Seat the learner plays in every game; the scripted opponent plays the other one."""
OPPONENT_SEAT = 1
ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


@dataclass(frozen=True)
class PlainPPOConfig:
    """PPO settings; defaults are experiments/duel_vs_based.yaml plus PPOTraining defaults."""

    num_games: int = 64
    """Duels stepped together by one vector step."""
    train_batch_size: int = 8000
    """Env steps per iteration; each game plays `train_batch_size // num_games` frames."""
    minibatch_size: int = 2000
    """SGD minibatch size."""
    num_epochs: int = 6
    """Passes over each train batch."""
    lr: float = 3e-4
    """Adam learning rate."""
    gamma: float = 0.995
    """Discount factor."""
    lam: float = 0.95
    """GAE lambda."""
    clip: float = 0.2
    """Surrogate clip epsilon (PPOTraining.clip_param)."""
    vf_clip: float = 10.0
    """Clamp on the squared value error (PPOTraining.vf_clip_param)."""
    entropy_coeff: float = 0.01
    """Weight of the entropy bonus."""
    vf_loss_coeff: float = 0.5
    """Weight of the value loss."""
    grad_clip: float | None = None
    """Global-norm gradient clip; None (the PPOTraining and RLlib default) disables it."""
    hidden: tuple[int, ...] = (256, 256)
    """Hidden sizes of the actor and of the (separate) critic MLP."""
    activation: str = "tanh"
    """Hidden activation, a key of `ACTIVATIONS`."""
    opponent: str = "based"
    """Scripted duel agent in the opponent seat (`scripted://duel/NAME`, rl_platform.teachers)."""
    seed: int = 0
    """Seeds torch, the games and the opponent's RNG."""
    torch_threads: int = 1
    """`torch.set_num_threads` for the run (1: measure one core)."""
    duel_settings: dict[str, Any] = field(default_factory=dict)
    """Keyword arguments for `DuelVectorGame` (`max_steps`, `reward_weights`, ...)."""

    def __post_init__(self) -> None:
        if self.train_batch_size < self.num_games:
            raise ValueError(
                f"train_batch_size ({self.train_batch_size}) must be >= num_games "
                f"({self.num_games}): every game plays at least one frame per iteration"
            )
        if not 0 < self.minibatch_size <= self.batch_size:
            raise ValueError(
                f"minibatch_size must be in [1, {self.batch_size}], got {self.minibatch_size}"
            )
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}")

    @property
    def rollout_length(self) -> int:
        """Frames each game plays per iteration."""
        return self.train_batch_size // self.num_games

    @property
    def batch_size(self) -> int:
        """Env steps actually collected per iteration (a multiple of `num_games`)."""
        return self.rollout_length * self.num_games


def build_mlp(in_dim: int, hidden: tuple[int, ...], activation: str, out_dim: int) -> nn.Module:
    """Linear+activation per hidden size, then a linear output layer (RLlib encoder + head)."""
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(in_dim, size), ACTIVATIONS[activation]()]
        in_dim = size
    layers.append(nn.Linear(in_dim, out_dim))
    return nn.Sequential(*layers)


class ActorCriticModule(nn.Module):
    """Separate actor and critic MLPs, as RLlib's default PPO module with vf_share_layers off."""

    def __init__(self, config: PlainPPOConfig) -> None:
        super().__init__()
        self.pi = build_mlp(OBS_SIZE, config.hidden, config.activation, NUM_ACTIONS)
        self.vf = build_mlp(OBS_SIZE, config.hidden, config.activation, 1)

    def values(self, obs: torch.Tensor) -> torch.Tensor:
        return self.vf(obs).squeeze(-1)


@dataclass
class Rollout:
    """Preallocated buffers for one iteration of T frames x N games (seat 0's view)."""

    obs: torch.Tensor
    """[T + 1, N, 64]; row T is the observation after the last frame (fragment bootstrap)."""
    actions: torch.Tensor
    logp: torch.Tensor
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    truncated_obs: list[tuple[int, np.ndarray, np.ndarray]]
    """(frame, games, final observations) of games truncated at that frame."""

    @classmethod
    def allocate(cls, frames: int, games: int) -> "Rollout":
        return cls(
            obs=torch.zeros(frames + 1, games, OBS_SIZE),
            actions=torch.zeros(frames, games, dtype=torch.int64),
            logp=torch.zeros(frames, games),
            rewards=np.zeros((frames, games), np.float32),
            terminated=np.zeros((frames, games), bool),
            truncated=np.zeros((frames, games), bool),
            truncated_obs=[],
        )

    @property
    def frames(self) -> int:
        return self.actions.shape[0]


@dataclass
class GameStats:
    """Results of games finished since the last `drain` (seat 0's point of view)."""

    returns: list[float] = field(default_factory=list)
    wins: int = 0
    draws: int = 0

    def drain(self) -> dict[str, float]:
        games = len(self.returns)
        out = {
            "games": games,
            "wins": self.wins,
            "draws": self.draws,
            "win_rate": self.wins / games if games else float("nan"),
            "draw_rate": self.draws / games if games else float("nan"),
            "mean_return": float(np.mean(self.returns)) if games else float("nan"),
        }
        self.returns, self.wins, self.draws = [], 0, 0
        return out


class DuelSampler:
    """Steps the games: the module acts for seat 0, the scripted opponent for seat 1."""

    def __init__(self, config: PlainPPOConfig) -> None:
        self.game = DuelVectorGame(config.num_games, seed=config.seed, **config.duel_settings)
        self.opponent = scripted_act(env_id=DUEL_ENV, agent=config.opponent)
        self.rng = np.random.default_rng(config.seed + 1)
        self.obs = self.game.reset(seed=config.seed).obs
        self.actions = np.zeros((config.num_games, self.game.num_seats), np.int64)
        self.episode_return = np.zeros(config.num_games, np.float64)
        self.stats = GameStats()

    @torch.inference_mode()
    def collect(self, module: ActorCriticModule, rollout: Rollout) -> None:
        rollout.truncated_obs.clear()
        for t in range(rollout.frames):
            obs = rollout.obs[t]
            obs.copy_(torch.from_numpy(self.obs[:, MAIN_SEAT]))
            logp_all = torch.log_softmax(module.pi(obs), dim=-1)
            action = torch.multinomial(logp_all.exp(), 1)
            rollout.actions[t] = action.squeeze(1)
            rollout.logp[t] = logp_all.gather(1, action).squeeze(1)
            self.actions[:, MAIN_SEAT] = rollout.actions[t].numpy()
            self.actions[:, OPPONENT_SEAT] = self.opponent(self.obs[:, OPPONENT_SEAT], self.rng)
            step = self.game.step(self.actions)
            self._record(rollout, t, step)
            self.obs = step.obs
        rollout.obs[-1].copy_(torch.from_numpy(self.obs[:, MAIN_SEAT]))

    def _record(self, rollout: Rollout, t: int, step: VectorStep) -> None:
        rewards = step.rewards[:, MAIN_SEAT]
        rollout.rewards[t] = rewards
        rollout.terminated[t] = step.terminated
        rollout.truncated[t] = step.truncated
        self.episode_return += rewards
        done = step.done
        if not done.any():
            return
        games = np.flatnonzero(done)
        if step.truncated.any():
            cut = np.flatnonzero(step.truncated)
            rollout.truncated_obs.append((t, cut, step.final_obs[cut, MAIN_SEAT].copy()))
        winner = step.winner[games]
        self.stats.wins += int((winner == MAIN_SEAT).sum())
        self.stats.draws += int((winner == DRAW).sum())
        self.stats.returns.extend(self.episode_return[games].tolist())
        self.episode_return[games] = 0.0


@torch.no_grad()
def prepare_batch(
    module: ActorCriticModule, rollout: Rollout, config: PlainPPOConfig
) -> dict[str, torch.Tensor]:
    """Flat [T * N] training batch: observations, actions, old log-probs, GAE results."""
    frames, games = rollout.frames, rollout.obs.shape[1]
    values = module.values(rollout.obs.reshape(-1, OBS_SIZE)).reshape(frames + 1, games)
    truncated_values = torch.zeros(frames, games)
    for t, cut, final_obs in rollout.truncated_obs:
        truncated_values[t, cut] = module.values(torch.from_numpy(final_obs))
    advantages, value_targets = compute_gae(
        values=values,
        rewards=torch.from_numpy(rollout.rewards),
        terminated=torch.from_numpy(rollout.terminated),
        truncated=torch.from_numpy(rollout.truncated),
        truncated_values=truncated_values,
        gamma=config.gamma,
        lam=config.lam,
    )
    return {
        "obs": rollout.obs[:-1].reshape(-1, OBS_SIZE),
        "actions": rollout.actions.reshape(-1),
        "logp": rollout.logp.reshape(-1),
        "advantages": standardize(advantages).reshape(-1),
        "value_targets": value_targets.reshape(-1),
    }


def ppo_loss(
    module: ActorCriticModule, mb: dict[str, torch.Tensor], config: PlainPPOConfig
) -> dict[str, torch.Tensor]:
    """PPO-clip terms (Schulman et al. 2017, arXiv:1707.06347) as RLlib's PPOTorchLearner
    computes them; keys starting with `loss_` sum to the total, the rest are diagnostics."""
    logp_all = torch.log_softmax(module.pi(mb["obs"]), dim=-1)
    newlogp = logp_all.gather(1, mb["actions"].unsqueeze(1)).squeeze(1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    logratio = newlogp - mb["logp"]
    ratio = logratio.exp()
    pg_loss1 = -mb["advantages"] * ratio
    pg_loss2 = -mb["advantages"] * torch.clamp(ratio, 1 - config.clip, 1 + config.clip)
    pg_loss = torch.max(pg_loss1, pg_loss2).mean()
    newvalue = module.values(mb["obs"])
    v_loss_unclipped = (newvalue - mb["value_targets"]) ** 2
    # RLlib clamps the squared error itself (vf_clip_param), not the value prediction.
    v_loss = torch.clamp(v_loss_unclipped, max=config.vf_clip).mean()
    entropy_loss = entropy.mean()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - logratio).mean()
        clipfrac = ((ratio - 1).abs() > config.clip).float().mean()
    return {
        "loss_pg": pg_loss,
        "loss_vf": config.vf_loss_coeff * v_loss,
        "loss_entropy": -config.entropy_coeff * entropy_loss,
        "vf_loss_unclipped": v_loss_unclipped.mean().detach(),
        "entropy": entropy_loss.detach(),
        "approx_kl": approx_kl,
        "clipfrac": clipfrac,
    }


def total_loss(terms: dict[str, torch.Tensor]) -> torch.Tensor:
    return sum(value for key, value in terms.items() if key.startswith("loss_"))


def update(
    module: ActorCriticModule,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    config: PlainPPOConfig,
) -> dict[str, float]:
    """`num_epochs` passes over shuffled minibatches; returns the last minibatch's terms."""
    size = batch["obs"].shape[0]
    terms: dict[str, torch.Tensor] = {}
    for _ in range(config.num_epochs):
        order = torch.randperm(size)
        for start in range(0, size, config.minibatch_size):
            index = order[start : start + config.minibatch_size]
            terms = ppo_loss(module, {key: value[index] for key, value in batch.items()}, config)
            optimizer.zero_grad(set_to_none=True)
            total_loss(terms).backward()
            if config.grad_clip is not None:
                nn.utils.clip_grad_norm_(module.parameters(), config.grad_clip)
            optimizer.step()
    return {key: float(value.detach()) for key, value in terms.items()}


def run(config: PlainPPOConfig, *, env_steps: int, sample_only: bool = False) -> dict[str, Any]:
    """Train (or only sample, `sample_only`) for at least `env_steps` env steps.

    Returns env steps, wall seconds of sampling and of learning, env steps per second end
    to end and for sampling alone, the win rate against the opponent over all finished
    games and a per-iteration `history`.
    """
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    module = ActorCriticModule(config)
    optimizer = torch.optim.Adam(module.parameters(), lr=config.lr)
    sampler = DuelSampler(config)
    rollout = Rollout.allocate(config.rollout_length, config.num_games)
    iterations = max(1, -(-env_steps // config.batch_size))
    sample_s = learn_s = 0.0
    history, wins, draws, games = [], 0, 0, 0
    start = time.perf_counter()
    for iteration in range(iterations):
        tick = time.perf_counter()
        sampler.collect(module, rollout)
        tock = time.perf_counter()
        sample_s += tock - tick
        terms: dict[str, float] = {}
        if not sample_only:
            terms = update(module, optimizer, prepare_batch(module, rollout, config), config)
            learn_s += time.perf_counter() - tock
        row = {"iteration": iteration + 1, "env_steps": (iteration + 1) * config.batch_size}
        row["reward_per_frame"] = float(rollout.rewards.mean())
        row |= sampler.stats.drain() | terms
        games, wins, draws = games + row["games"], wins + row["wins"], draws + row["draws"]
        history.append(row)
    wall_s = time.perf_counter() - start
    steps = iterations * config.batch_size
    return {
        "env_steps": steps,
        "iterations": iterations,
        "sample_s": sample_s,
        "learn_s": learn_s,
        "wall_s": wall_s,
        "env_steps_per_s": steps / wall_s,
        "sample_env_steps_per_s": steps / sample_s,
        "games": games,
        "win_rate": wins / games if games else float("nan"),
        "draw_rate": draws / games if games else float("nan"),
        "history": history,
    }


def _print_history(history: list[dict[str, Any]]) -> None:
    """Per iteration: finished games, their win rate and mean return, reward per frame."""
    print(f"{'iter':>5} {'env_steps':>10} {'games':>6} {'win':>6} {'return':>8} ", end="")
    print(f"{'rew/frame':>10} {'entropy':>8} {'kl':>7}")
    for row in history:
        print(
            f"{row['iteration']:>5} {row['env_steps']:>10,} {row['games']:>6} "
            f"{row['win_rate']:>6.2f} {row['mean_return']:>8.2f} "
            f"{row['reward_per_frame']:>10.4f} {row.get('entropy', 0.0):>8.3f} "
            f"{row.get('approx_kl', 0.0):>7.4f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-steps", type=int, default=40_000)
    parser.add_argument("--num-games", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--history", action="store_true", help="print per-iteration results")
    args = parser.parse_args()
    config = PlainPPOConfig(num_games=args.num_games, torch_threads=args.threads, seed=args.seed)
    rows = []
    for mode, sample_only in (("sample only", True), ("sample + learn", False)):
        result = run(config, env_steps=args.env_steps, sample_only=sample_only)
        rows.append((mode, result))
    print(f"plain torch PPO, {config.num_games} games, {args.threads} torch thread(s)")
    header = f"{'mode':<15} {'env_steps':>10} {'sample_s':>9} {'learn_s':>8}"
    print(f"{header} {'steps/s e2e':>12} {'steps/s sample':>15} {'games':>6} {'win':>6}")
    for mode, r in rows:
        print(
            f"{mode:<15} {r['env_steps']:>10,} {r['sample_s']:>9.2f} {r['learn_s']:>8.2f} "
            f"{r['env_steps_per_s']:>12,.0f} {r['sample_env_steps_per_s']:>15,.0f} "
            f"{r['games']:>6} {r['win_rate']:>6.2f}"
        )
    if args.history:
        _print_history(rows[-1][1]["history"])


if __name__ == "__main__":
    main()
