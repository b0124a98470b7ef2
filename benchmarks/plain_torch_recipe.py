"""Plain-torch recurrent PPO of the reference recipe: the yardstick for `rlp train` (no Ray).

    uv run python -m benchmarks.plain_torch_recipe [--device cuda] [--captured]
        [--env-steps 100000] [--layers 6 --d-model 256 --heads 8 --lstm 512 --history 90]
        [--json result.json]

What a CleanRL user would write for experiments/duel_selfplay_transformer.yaml: one process,
synchronous, no Ray and nothing from rl_platform's sampling, league or RLlib adapters (the
parts live in benchmarks/plain_recipe/, one concept per module). Model, PPO settings, league
mix and env kwargs come from that file, so the yardstick cannot drift from the recipe; the
flags change sizes, budget and mode only. The recipe as run here:
* net: `StreamingTransformerLSTMNet`, the class our RLModule wraps (6 layers, 8 heads,
  d_model 256, history 90, LSTM 512, critic on the observation, `lstm_skip`, bf16 autocast on
  CUDA), fed what the OpponentHistory connector writes for `encoder: streaming`;
* sampling: 128 games x 32 frames = 4096 env steps (game frames) per iteration. Main plays
  seat 0; each game draws seat 1 at its reset from the recipe's `league.opponent_mix` at the
  env steps trained so far (the product's schedule, `LeagueSpec.mix_at`; linear between
  1.2M and 2.4M env steps, from 80% `based` / 15% self-play / 5% `constant` to 15 / 80 / 5):
  the product's scripted `based` and `constant` (numpy), or for `self_play` one of the last
  `league.slots` (4) snapshots of main, frozen every `league.snapshot_every_env_steps`
  (100k; before the first, main itself, as the league's mirror match). Recurrent states (LSTM
  + key/value cache) live on the device in preallocated [games, ...] buffers, reset per game;
* learning: V(s) = critic(observation), one flat pass; GAE (benchmarks/common/gae.py) and
  the PPO loss of plain_torch_ppo.py (RLlib's semantics), masked to real steps; 4 epochs of
  4096 / 1024 = 4 shuffled minibatches; Adam lr 2e-4, clip_grad_norm_ 1.0.

Two modes, the same report:
* eager (the floor): per frame one forward of main over all games and one per snapshot over
  only its games; each game's fragment is cut at its game ends into sequences from the state
  main had before them, zero-padded (`seq_lens`, packed LSTM, as RLlib's
  AddTimeDimToBatchAndZeroPad with max_seq_len 32); minibatches of sequences, step by step.
* `--captured` (the bar; CUDA only, refused elsewhere with exit code 2): what a careful plain
  PyTorch user writes for a GPU. Acting replays one CUDA graph per (network, state buffer)
  over all games at a fixed batch size, with one upload of the observations and one download
  of every network's actions per frame (plain_recipe/acting.py). Learning trains on one
  fixed-length sequence per game with `resets` at game starts (the written-out LSTM and the
  windowed attention restart there) and replays each minibatch step -- gather, forward, loss,
  backward, clip_grad_norm_, Adam(capturable=True, lr as a tensor) -- as one CUDA graph per
  minibatch shape, captured after warm-up steps on a side stream, with no host read inside;
  the terms are read once per iteration (plain_recipe/captured_update.py).
  No torch.compile: at these sizes the cost is launching hundreds of small kernels from
  Python, which the graphs remove; compile would add fusion on top, but it graph-breaks at
  `backward()` and at the LSTM (unless `allow_rnn`), and its own graphs would nest inside
  ours. One well-understood mechanism keeps the bar readable; LeanRL measures graphs at
  1.8-2x on top of compile, so compile's share would add to this bar, not replace it.

Same as `rlp train`: net class and sizes, PPO settings, GAE and loss, sequence chunking, the
duel, the opponent mix schedule and the scripted agents. Not the same: main always in seat 0
(rlp train draws the seat per game); `self_play` draws uniformly among the last 4 snapshots
(the league: PFSP by main's win rates over up to 100 snapshots, loaded into 4 opponent
slots); a new snapshot takes over its slot's games in progress; no `mix_pfsp`, exploiters,
evaluation, checkpoints or metrics.

Prints env steps/s (end to end, and without the warm-up first iteration), the split sample /
learn and, inside learning, prep (values, GAE, batch layout) / SGD, peak GPU memory on CUDA,
main's games won per opponent class, and max |logp_new - logp_old| over an iteration's first
minibatch before its first step: rounding only when the recurrent state bookkeeping is right.
"""

import sys
from functools import partial
from typing import Any

import numpy as np
import torch

from benchmarks.plain_recipe.acting import CapturedActing, EagerActing
from benchmarks.plain_recipe.batch import prepare_batch, prepare_fixed_batch
from benchmarks.plain_recipe.captured_update import CapturedUpdate
from benchmarks.plain_recipe.config import RecipeConfig, config_from_args, parse_args
from benchmarks.plain_recipe.learning import update
from benchmarks.plain_recipe.net import build_net
from benchmarks.plain_recipe.opponents import OpponentPool
from benchmarks.plain_recipe.report import clock, phase_times, print_result, summarize
from benchmarks.plain_recipe.rollout import Rollout
from benchmarks.plain_recipe.sampling import RecipeSampler
from rl_platform.nets.blocks import count_parameters
from rl_platform.utils.atomic import write_json_atomic


def run(config: RecipeConfig) -> dict[str, Any]:
    """Train for `config.iterations` iterations; returns timings, rates and diagnostics."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    device = torch.device(config.device)
    net = build_net(config)
    initial = net.initial_state()
    opponents = OpponentPool(config, main=net, rng=np.random.default_rng(config.seed + 1))
    if config.captured:
        acting = CapturedActing(config, initial, slots=opponents.slots)
        prepare, learn = prepare_fixed_batch, CapturedUpdate(net, config)
    else:
        acting = EagerActing(config, initial)
        optimizer = torch.optim.Adam(net.parameters(), lr=config.training.lr)
        prepare, learn = prepare_batch, partial(update, net, optimizer, config=config)
    sampler = RecipeSampler(config, opponents=opponents, acting=acting)
    rollout = Rollout.allocate(config, initial)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    history, next_snapshot, start = [], config.snapshot_every, clock(device)
    for iteration in range(1, config.iterations + 1):
        opponents.set_env_steps((iteration - 1) * config.batch_size)
        times = [clock(device)]
        sampler.collect(net, rollout)
        times.append(clock(device))
        batch = prepare(net, rollout, initial, config)
        times.append(clock(device))
        terms = learn(batch)
        times.append(clock(device))
        history.append(phase_times(times) | terms)
        if iteration * config.batch_size >= next_snapshot:
            opponents.freeze()
            next_snapshot += config.snapshot_every
    result = summarize(history, wall_s=clock(device) - start, config=config)
    result |= {"parameters": count_parameters(net), "mix": opponents.mix}
    return result | opponents.results()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.captured and not torch.cuda.is_available():
        refuse("--captured: torch sees no CUDA device on this machine (a GPU yardstick)")
    if args.captured and args.device != "cuda":
        refuse("--captured needs --device cuda (CUDA graphs)")
    if args.device == "cuda" and not torch.cuda.is_available():
        refuse("--device cuda: torch sees no CUDA device on this machine")
    result = run(config_from_args(args))
    print_result(result)
    if args.json is not None:
        write_json_atomic(args.json, result)


def refuse(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(2)


if __name__ == "__main__":
    main()
