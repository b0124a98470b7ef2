"""Plain-torch recurrent PPO of the reference recipe: the yardstick for `rlp train` (no Ray).

    uv run python -m benchmarks.plain_torch_recipe [--device cuda] [--env-steps 100000]
        [--layers 6 --d-model 256 --heads 8 --lstm 512 --history 90] [--json result.json]

What a CleanRL user would write for experiments/duel_selfplay_transformer.yaml: one process,
eager, synchronous, no Ray and nothing from rl_platform's sampling, league or RLlib adapters.
Model, PPO settings and env kwargs come from that file, so the yardstick cannot drift from
the recipe; the flags change sizes and budget only. The recipe as run here:
* net: `StreamingTransformerLSTMNet`, the class our RLModule wraps (6 layers, 8 heads,
  d_model 256, history 90, LSTM 512, critic on the observation, `lstm_skip`, bf16 autocast on
  CUDA), fed what the OpponentHistory connector writes for `encoder: streaming`;
* sampling: 128 games x 32 frames = 4096 env steps (game frames) per iteration. Main plays
  seat 0; each game draws seat 1 at its reset: the frozen snapshot of main (refreshed every
  `--snapshot-every` env steps) with probability 0.8, else the scripted `based`. Per frame:
  one T=1 forward of main over all games, one of the snapshot over only its games (its state
  rows gathered, then scattered back), numpy `based` for the rest. Recurrent states (LSTM +
  key/value cache) live on the device in preallocated [games, ...] buffers, reset per game;
* learning: each game's fragment is cut at its game ends into sequences that start from the
  state main had before their first frame, zero-padded with `seq_lens` (as RLlib's
  AddTimeDimToBatchAndZeroPad, max_seq_len 32). V(s) = critic(observation): one flat pass.
  GAE (benchmarks/common/gae.py) and PPO loss of plain_torch_ppo.py (RLlib's semantics),
  masked to real steps; 4 epochs of 4096 / 1024 = 4 shuffled sequence minibatches; Adam lr
  2e-4, clip_grad_norm_ 1.0.

Same as `rlp train`: net class and sizes, PPO settings, GAE and loss, sequence chunking, the
duel and `based`. Not the same: main always in seat 0 (rlp train draws the seat per game); a
fixed 80/20 snapshot/`based` mix with one snapshot (the league: PFSP over up to 100 snapshots
plus `based`/`constant`, blended over env steps); a refreshed snapshot takes over games in
progress; no evaluation, checkpoints or metrics.

Prints env steps/s (end to end, and without the warm-up first iteration), the split sample /
learn and, inside learning, prep (values, GAE, padding) / SGD, peak GPU memory on CUDA, and
max |logp_new - logp_old| over an iteration's first minibatch before its first step: rounding
only when the recurrent state bookkeeping is right.
"""

import argparse
import copy
import sys
import time
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from benchmarks.common import EXPERIMENTS, compute_gae, standardize
from rl_platform import load_spec
from rl_platform.envs.duel import NUM_ACTIONS, OBS_SIZE
from rl_platform.envs.duel.vector_game import DuelVectorGame
from rl_platform.envs.vector_game import VectorStep
from rl_platform.modules.nets import count_parameters
from rl_platform.modules.transformer_lstm_net import State, transformer_lstm_net_for
from rl_platform.observation_keys import HISTORY_KEY, MASK_KEY, SELF_KEY
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec
from rl_platform.spec.training import PPOTraining
from rl_platform.teachers import DUEL_ENV, scripted_act
from rl_platform.utils.atomic import write_json_atomic

RECIPE = EXPERIMENTS / "duel_selfplay_transformer.yaml"
MAIN_SEAT, OPPONENT_SEAT = 0, 1
STATE_IN = "state_in."
"""Prefix of the learner batch's state keys: sliced per minibatch like every other key."""
PHASES = ("sample_s", "prep_s", "sgd_s")
SPECS = ("model", "training")
"""`RecipeConfig` fields that are spec models (dumped on their own in the result)."""


@dataclass(frozen=True)
class RecipeConfig:
    """One run: the recipe's model, PPO settings and env kwargs, plus shape and budget."""

    model: TransformerLSTMModelSpec
    training: PPOTraining
    """Its `train_batch_size` is `num_games * rollout`."""
    device: str = "cpu"
    env_steps: int = 100_000
    """Budget; whole iterations are run, at least one."""
    num_games: int = 128
    rollout: int = 32
    """Frames each game plays per iteration (at most `model.max_seq_len`)."""
    snapshot_every: int = 100_000
    """Env steps between copies of main into the frozen snapshot."""
    snapshot_share: float = 0.8
    """Probability that a game's opponent is the snapshot (else `based`)."""
    seed: int = 0
    threads: int = 1
    """`torch.set_num_threads` (the command's default: the recipe's `resources.torch_threads`)."""
    duel_settings: dict[str, Any] = field(default_factory=dict)
    """`DuelVectorGame` keyword arguments (the recipe's `env.kwargs`)."""

    def __post_init__(self) -> None:
        # A longer fragment would need main's state stored mid-fragment to start a chunk.
        if self.rollout > self.model.max_seq_len:
            raise ValueError(f"rollout must be <= max_seq_len ({self.model.max_seq_len})")

    @property
    def batch_size(self) -> int:
        return self.num_games * self.rollout

    @property
    def iterations(self) -> int:
        return max(1, -(-self.env_steps // self.batch_size))

    @property
    def parts(self) -> tuple[slice, slice]:
        """(own features, opponent frame) of a raw observation: `model.obs_split`."""
        split = self.model.obs_split or {}
        return slice(*split["self"]), slice(*split["opponent"])


def build_net(config: RecipeConfig) -> nn.Module:
    own, opponent = config.parts
    return transformer_lstm_net_for(
        obs_dim=own.stop - own.start,
        frame_dim=opponent.stop - opponent.start,
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        config=config.model,
    ).to(config.device)


def net_inputs(obs: torch.Tensor, config: RecipeConfig) -> dict[str, torch.Tensor]:
    """Raw observations [B, T, 64] -> the streaming net's inputs (one frame per step)."""
    own, opponent = config.parts
    return {
        SELF_KEY: obs[..., own],
        HISTORY_KEY: obs[..., opponent].unsqueeze(-2),
        MASK_KEY: obs.new_ones(*obs.shape[:-1], 1),
    }


def rows_of(state: State, rows: int) -> State:
    """The unbatched `state` repeated for `rows` rows, in fresh storage."""
    return {k: v.expand(rows, *v.shape).clone() for k, v in state.items()}


def act(
    net: nn.Module, obs: torch.Tensor, state: State, config: RecipeConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """One frame for B rows: sampled actions [B] and their log-probs [B]. `state` is a
    preallocated buffer and is overwritten with the state after the frame."""
    embeddings, state_out = net.encode(net_inputs(obs[:, None], config), state)
    for key, value in state.items():
        value.copy_(state_out[key])
    logp_all = torch.log_softmax(net.policy(embeddings[:, 0], None).float(), dim=-1)
    action = torch.multinomial(logp_all.exp(), 1)
    return action.squeeze(1), logp_all.gather(1, action).squeeze(1)


@dataclass
class Rollout:
    """One iteration of T frames x N games from main's seat; tensors on the device."""

    obs: torch.Tensor
    """[T + 1, N, 64]; row T is the observation after the last frame (bootstrap)."""
    actions: torch.Tensor
    logp: torch.Tensor
    state0: State
    """Main's state [N, ...] before frame 0: where each game's first sequence starts."""
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    truncated_obs: list[tuple[int, np.ndarray, np.ndarray]] = field(default_factory=list)
    """(frame, games, final observations) of games truncated at that frame."""

    @classmethod
    def allocate(cls, config: RecipeConfig, initial: State) -> "Rollout":
        frames, games, device = config.rollout, config.num_games, config.device
        return cls(
            obs=torch.zeros(frames + 1, games, OBS_SIZE, device=device),
            actions=torch.zeros(frames, games, dtype=torch.int64, device=device),
            logp=torch.zeros(frames, games, device=device),
            state0=rows_of(initial, games),
            rewards=np.zeros((frames, games), np.float32),
            terminated=np.zeros((frames, games), bool),
            truncated=np.zeros((frames, games), bool),
        )


class RecipeSampler:
    """Steps the games: main in seat 0; the snapshot or `based` in seat 1, drawn per game."""

    def __init__(self, config: RecipeConfig, initial: State) -> None:
        self.config, self.initial, self.device = config, initial, torch.device(config.device)
        self.game = DuelVectorGame(config.num_games, seed=config.seed, **config.duel_settings)
        self.based = scripted_act(env_id=DUEL_ENV, agent="based")
        self.rng = np.random.default_rng(config.seed + 1)
        self.obs = self.game.reset(seed=config.seed).obs
        self.snapshot_plays = self.rng.random(config.num_games) < config.snapshot_share
        self.main_state = rows_of(initial, config.num_games)
        self.opponent_state = rows_of(initial, config.num_games)
        self.actions = np.zeros((config.num_games, self.game.num_seats), np.int64)
        self.games = np.zeros(2, np.int64)
        """Finished games by opponent (0: `based`, 1: the snapshot); `wins` likewise."""
        self.wins = np.zeros(2, np.int64)

    @torch.no_grad()
    def collect(self, main: nn.Module, snapshot: nn.Module, rollout: Rollout) -> None:
        for key, value in self.main_state.items():
            rollout.state0[key].copy_(value)
        rollout.truncated_obs.clear()
        for t in range(self.config.rollout):
            obs = rollout.obs[t]
            obs.copy_(torch.from_numpy(self.obs[:, MAIN_SEAT]))
            action, logp = act(main, obs, self.main_state, self.config)
            rollout.actions[t], rollout.logp[t] = action, logp
            # The snapshot's forward is queued before main's actions come back to the host.
            self.actions[:, OPPONENT_SEAT] = self._opponent_actions(snapshot)
            self.actions[:, MAIN_SEAT] = action.cpu().numpy()
            step = self.game.step(self.actions)
            self._record(rollout, t, step)
            self.obs = step.obs
        rollout.obs[-1].copy_(torch.from_numpy(self.obs[:, MAIN_SEAT]))

    def _opponent_actions(self, snapshot: nn.Module) -> np.ndarray:
        actions = np.zeros(self.config.num_games, np.int64)
        rows, based = np.flatnonzero(self.snapshot_plays), np.flatnonzero(~self.snapshot_plays)
        snapshot_actions = None
        if rows.size:
            index = torch.from_numpy(rows).to(self.device)
            state = {k: v[index] for k, v in self.opponent_state.items()}
            obs = torch.from_numpy(self.obs[rows, OPPONENT_SEAT]).to(self.device)
            snapshot_actions, _ = act(snapshot, obs, state, self.config)
            for key, value in self.opponent_state.items():
                value.index_copy_(0, index, state[key])
        if based.size:
            actions[based] = self.based(self.obs[based, OPPONENT_SEAT], self.rng)
        if snapshot_actions is not None:
            actions[rows] = snapshot_actions.cpu().numpy()
        return actions

    def _record(self, rollout: Rollout, t: int, step: VectorStep) -> None:
        rollout.rewards[t] = step.rewards[:, MAIN_SEAT]
        rollout.terminated[t], rollout.truncated[t] = step.terminated, step.truncated
        if not step.done.any():
            return
        if step.truncated.any():
            cut = np.flatnonzero(step.truncated)
            rollout.truncated_obs.append((t, cut, step.final_obs[cut, MAIN_SEAT].copy()))
        ended = np.flatnonzero(step.done)
        opponent = self.snapshot_plays[ended].astype(np.int64)
        np.add.at(self.games, opponent, 1)
        np.add.at(self.wins, opponent, (step.winner[ended] == MAIN_SEAT).astype(np.int64))
        index = torch.from_numpy(ended).to(self.device)
        for state in (self.main_state, self.opponent_state):
            for key, value in state.items():
                value[index] = self.initial[key]
        self.snapshot_plays[ended] = self.rng.random(ended.size) < self.config.snapshot_share


@dataclass(frozen=True)
class Sequences:
    """Where frame (t, n) of a [T, N] fragment lands in the padded learner batch [S, L]: each
    game's fragment is cut after each of its game ends; a game's sequences are consecutive."""

    seq: torch.Tensor
    """[T * N] sequence of each frame (row-major over [T, N])."""
    pos: torch.Tensor
    """[T * N] step of each frame within its sequence."""
    first: torch.Tensor
    """[N] the sequence that starts each game's fragment (its state is `Rollout.state0`)."""
    lengths: torch.Tensor
    """[S] real steps per sequence (`seq_lens`)."""

    @classmethod
    def cut(cls, done: np.ndarray, device: torch.device) -> "Sequences":
        starts = np.zeros_like(done)
        starts[0], starts[1:] = True, done[:-1]
        segment = np.cumsum(starts, axis=0) - 1  # [T, N] sequence within its game
        first = np.concatenate([[0], np.cumsum(segment[-1] + 1)[:-1]])
        seq = first + segment
        t = np.arange(done.shape[0])[:, None]
        pos = t - np.maximum.accumulate(np.where(starts, t, 0), axis=0)
        arrays = (seq, pos, first, np.bincount(seq.ravel()))
        return cls(*(torch.as_tensor(a.ravel(), dtype=torch.int64, device=device) for a in arrays))

    def pad(self, x: torch.Tensor) -> torch.Tensor:
        """[T, N, ...] -> [S, T, ...], zeros after each sequence's end."""
        out = x.new_zeros(self.lengths.shape[0], x.shape[0], *x.shape[2:])
        out[self.seq, self.pos] = x.reshape(-1, *x.shape[2:])
        return out


def values_of(net: nn.Module, obs: torch.Tensor, config: RecipeConfig) -> torch.Tensor:
    """V(s) [...] of raw observations [..., 64] (`critic_input: observation`)."""
    return net.critic(net.critic_observation(net_inputs(obs, config)))


@torch.no_grad()
def prepare_batch(
    net: nn.Module, rollout: Rollout, initial: State, config: RecipeConfig
) -> dict[str, torch.Tensor]:
    """Values, GAE and the padded sequence batch; state keys are prefixed `STATE_IN`."""
    device, (frames, games) = rollout.obs.device, rollout.actions.shape
    # The critic reads the current observation only: [T + 1, N] in one flat pass.
    values = values_of(net, rollout.obs, config)
    truncated_values = torch.zeros(frames, games, device=device)
    for t, cut, final_obs in rollout.truncated_obs:
        final = torch.from_numpy(final_obs).to(device)[None]  # [1, games, 64]: a time axis
        truncated_values[t, cut] = values_of(net, final, config)[0]
    arrays = (rollout.rewards, rollout.terminated, rollout.truncated)
    rewards, terminated, truncated = (torch.from_numpy(a).to(device) for a in arrays)
    advantages, value_targets = compute_gae(
        values=values,
        rewards=rewards,
        terminated=terminated,
        truncated=truncated,
        truncated_values=truncated_values,
        gamma=config.training.gamma,
        lam=config.training.lambda_,
    )
    sequences = Sequences.cut(rollout.terminated | rollout.truncated, device)
    batch = {
        "obs": sequences.pad(rollout.obs[:-1]),
        "actions": sequences.pad(rollout.actions),
        "logp": sequences.pad(rollout.logp),
        "advantages": sequences.pad(standardize(advantages)),
        "value_targets": sequences.pad(value_targets),
        "valid": sequences.pad(torch.ones(frames, games, device=device)),
        "seq_lens": sequences.lengths,
    }
    for key, value in rows_of(initial, sequences.lengths.shape[0]).items():
        value[sequences.first] = rollout.state0[key]
        batch[STATE_IN + key] = value
    return batch


def ppo_loss(
    net: nn.Module, mb: dict[str, torch.Tensor], config: RecipeConfig
) -> dict[str, torch.Tensor]:
    """plain_torch_ppo.ppo_loss (RLlib's PPOTorchLearner) as means over real steps; keys
    starting with `loss_` sum to the total, the rest are diagnostics."""
    training, valid = config.training, mb["valid"]
    inputs = net_inputs(mb["obs"], config)
    state = {k.removeprefix(STATE_IN): v for k, v in mb.items() if k.startswith(STATE_IN)}
    embeddings, _ = net.encode(inputs, state, mb["seq_lens"])
    logp_all = torch.log_softmax(net.policy(embeddings, None).float(), dim=-1)
    newlogp = logp_all.gather(-1, mb["actions"].unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1)
    logratio = newlogp - mb["logp"]
    ratio = logratio.exp()
    clip = training.clip_param
    pg_loss1 = -mb["advantages"] * ratio
    pg_loss2 = -mb["advantages"] * torch.clamp(ratio, 1 - clip, 1 + clip)
    pg_loss = masked_mean(torch.max(pg_loss1, pg_loss2), valid)
    newvalue = net.critic(net.critic_observation(inputs))
    v_loss_unclipped = (newvalue - mb["value_targets"]) ** 2
    # RLlib clamps the squared error itself (vf_clip_param), not the value prediction.
    v_loss = masked_mean(torch.clamp(v_loss_unclipped, max=training.vf_clip_param), valid)
    entropy_loss = masked_mean(entropy, valid)
    with torch.no_grad():
        approx_kl = masked_mean((ratio - 1) - logratio, valid)
        max_abs_logratio = (logratio.abs() * valid).max()
    return {
        "loss_pg": pg_loss,
        "loss_vf": training.vf_loss_coeff * v_loss,
        "loss_entropy": -training.entropy_coeff * entropy_loss,
        "entropy": entropy_loss.detach(),
        "approx_kl": approx_kl,
        "max_abs_logratio": max_abs_logratio,
    }


def masked_mean(x: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    return (x * valid).sum() / valid.sum()


def update(
    net: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, torch.Tensor],
    config: RecipeConfig,
) -> dict[str, float]:
    """`num_epochs` passes over shuffled sequence minibatches (batch / minibatch of them).

    Returns the last minibatch's terms and, as `first_*`, the first minibatch's before any
    step: acting and learning then used the same weights, so logp_new == logp_old."""
    sequences, training = batch["seq_lens"].shape[0], config.training
    groups = max(1, config.batch_size // training.minibatch_size)
    terms: dict[str, torch.Tensor] = {}
    first: dict[str, torch.Tensor] = {}
    for _ in range(training.num_epochs):
        order = torch.randperm(sequences, device=batch["seq_lens"].device)
        for index in order.tensor_split(groups):
            terms = ppo_loss(net, {key: value[index] for key, value in batch.items()}, config)
            first = first or {f"first_{k}": terms[k] for k in ("max_abs_logratio", "approx_kl")}
            optimizer.zero_grad(set_to_none=True)
            sum(value for key, value in terms.items() if key.startswith("loss_")).backward()
            if training.grad_clip is not None:
                nn.utils.clip_grad_norm_(net.parameters(), training.grad_clip)
            optimizer.step()
    return {key: float(value.detach()) for key, value in (terms | first).items()}


def clock(device: torch.device) -> float:
    """perf_counter once the device's queued kernels are done: each phase owns its time."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter()


def run(config: RecipeConfig) -> dict[str, Any]:
    """Train for `config.iterations` iterations; returns timings, rates and diagnostics."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    device = torch.device(config.device)
    net = build_net(config)
    # A deep copy leaves the LSTM's weights in separate chunks, which cuDNN would compact on
    # every call (a UserWarning per forward); `.to` packs them again.
    snapshot = copy.deepcopy(net).to(device).requires_grad_(False)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.training.lr)
    initial = net.initial_state()
    sampler, rollout = RecipeSampler(config, initial), Rollout.allocate(config, initial)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    history, next_snapshot, start = [], config.snapshot_every, clock(device)
    for iteration in range(1, config.iterations + 1):
        times = [clock(device)]
        sampler.collect(net, snapshot, rollout)
        times.append(clock(device))
        batch = prepare_batch(net, rollout, initial, config)
        times.append(clock(device))
        terms = update(net, optimizer, batch, config)
        times.append(clock(device))
        history.append(dict(zip(PHASES, np.diff(times).tolist(), strict=True)) | terms)
        if iteration * config.batch_size >= next_snapshot:
            snapshot.load_state_dict(net.state_dict())
            next_snapshot += config.snapshot_every
    result = summarize(history, wall_s=clock(device) - start, config=config)
    result["parameters"] = count_parameters(net)
    result["games"] = dict(zip(("based", "snapshot"), sampler.games.tolist(), strict=True))
    result["wins"] = dict(zip(("based", "snapshot"), sampler.wins.tolist(), strict=True))
    return result


def summarize(history: list[dict[str, float]], *, wall_s: float, config: RecipeConfig) -> dict:
    """Totals over all iterations; rate and split over the steady ones (all but the first,
    which pays for allocation, autotuning and warm caches) when there are any."""
    total = {key: sum(row[key] for row in history) for key in PHASES}
    steady = {key: sum(row[key] for row in history[1:]) for key in PHASES}
    split = steady if len(history) > 1 else total
    learn_s = split["prep_s"] + split["sgd_s"]
    steps, cuda = config.iterations * config.batch_size, config.device == "cuda"
    return {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "env_steps": steps,
        "iterations": config.iterations,
        "wall_s": wall_s,
        **total,
        "learn_s": total["prep_s"] + total["sgd_s"],
        "env_steps_per_s": steps / wall_s,
        "steady_env_steps_per_s": (steps - config.batch_size) / sum(steady.values())
        if len(history) > 1
        else None,
        "first_iteration_s": sum(history[0][key] for key in PHASES),
        "sample_pct": 100 * split["sample_s"] / (split["sample_s"] + learn_s),
        "prep_pct_of_learn": 100 * split["prep_s"] / learn_s,
        "peak_gpu_mem_gib": torch.cuda.max_memory_allocated() / 2**30 if cuda else None,
        "first_max_abs_logratio": max(row["first_max_abs_logratio"] for row in history),
        "final": history[-1],
        "history": history,
        "config": {
            "model": config.model.settings,
            "training": config.training.model_dump(by_alias=True),
        }
        | {f.name: getattr(config, f.name) for f in fields(config) if f.name not in SPECS},
    }


def print_result(result: dict[str, Any]) -> None:
    config, final, steady = result["config"], result["final"], result["steady_env_steps_per_s"]
    model, sample, prep = config["model"], result["sample_pct"], result["prep_pct_of_learn"]
    print(
        f"plain-torch recipe on {result['device']} ({config['threads']} threads), "
        f"{result['parameters']:,} parameters ({model['layers']} layers, d_model "
        f"{model['d_model']}, LSTM {model['lstm_cell_size']}, history {model['history']}): "
        f"{result['iterations']} x {config['num_games']} games x {config['rollout']} frames"
    )
    print(
        f"env steps/s: {result['env_steps_per_s']:,.0f} end to end"
        + (f", {steady:,.0f} without the first iteration" if steady else "")
        + f" (first iteration {result['first_iteration_s']:.2f} s, wall {result['wall_s']:.2f} s)"
    )
    print(
        f"time: sample {sample:.1f}% | learn {100 - sample:.1f}% = prep {prep:.1f}% | "
        f"SGD {100 - prep:.1f}% of learning" + (" (steady iterations)" if steady else "")
    )
    print(
        f"first minibatch max |logp_new - logp_old| {result['first_max_abs_logratio']:.1e}; "
        f"last: pg {final['loss_pg']:.4f}, vf {final['loss_vf']:.4f}, entropy "
        f"{final['entropy']:.3f}, approx_kl {final['approx_kl']:.5f}; games won: "
        + ", ".join(f"{result['wins'][k]}/{n} vs {k}" for k, n in result["games"].items())
    )
    if result["peak_gpu_mem_gib"] is not None:
        print(f"peak GPU memory: {result['peak_gpu_mem_gib']:.2f} GiB")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--device", choices=("cpu", "cuda"), default=default_device)
    parser.add_argument("--env-steps", type=int, default=RecipeConfig.env_steps)
    parser.add_argument("--num-games", type=int, default=RecipeConfig.num_games)
    parser.add_argument("--rollout", type=int, default=RecipeConfig.rollout, help="frames/game")
    parser.add_argument("--snapshot-every", type=int, default=RecipeConfig.snapshot_every)
    recipe = "default: the recipe's"
    for flag in ("--minibatch", "--epochs", "--layers", "--d-model", "--heads", "--kv-heads"):
        parser.add_argument(flag, type=int, help=recipe)
    parser.add_argument("--lstm", type=int, help=f"LSTM cell size; {recipe}")
    parser.add_argument("--history", type=int, help=f"opponent frames (H); {recipe}")
    parser.add_argument("--threads", type=int, help=f"torch threads; {recipe}")
    parser.add_argument("--seed", type=int, default=RecipeConfig.seed)
    parser.add_argument("--json", type=Path, help="also write the result here (atomically)")
    return parser.parse_args(argv)


def config_from_args(args: argparse.Namespace) -> RecipeConfig:
    """The recipe's settings, with the flags that were given on top (re-validated)."""
    spec = load_spec(RECIPE)
    sizes = {"layers": args.layers, "d_model": args.d_model, "heads": args.heads}
    sizes |= {"kv_heads": args.kv_heads, "lstm_cell_size": args.lstm, "history": args.history}
    sizes = {key: value for key, value in sizes.items() if value is not None}
    ppo = {"minibatch_size": args.minibatch, "num_epochs": args.epochs}
    ppo = {key: value for key, value in ppo.items() if value is not None}
    ppo["train_batch_size"] = args.num_games * args.rollout
    shape = ("device", "env_steps", "num_games", "rollout", "snapshot_every", "seed")
    return RecipeConfig(
        model=TransformerLSTMModelSpec.model_validate(spec.model.model_dump() | sizes),
        training=PPOTraining.model_validate(spec.training.model_dump(by_alias=True) | ppo),
        threads=args.threads or spec.resources.torch_threads or 1,
        duel_settings=dict(spec.env.kwargs),
        **{key: getattr(args, key) for key in shape},
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        print("--device cuda: torch sees no CUDA device on this machine", file=sys.stderr)
        sys.exit(2)
    result = run(config_from_args(args))
    print_result(result)
    if args.json is not None:
        write_json_atomic(args.json, result)


if __name__ == "__main__":
    main()
