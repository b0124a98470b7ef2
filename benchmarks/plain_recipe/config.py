"""One run of the yardstick: the recipe's settings from its spec file, the flags on top."""

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from benchmarks.common import EXPERIMENTS
from rl_platform import load_spec
from rl_platform.spec.league import LeagueSpec
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec
from rl_platform.spec.training import PPOTraining

RECIPE = EXPERIMENTS / "duel_selfplay_transformer.yaml"
MAIN_SEAT, OPPONENT_SEAT = 0, 1
"""Main plays seat 0 of every game (`rlp train` draws main's seat per game)."""
SPECS = ("model", "training", "league")
"""`RecipeConfig` fields that are spec models (dumped on their own in the result)."""
DESCRIPTION = "Plain-torch recurrent PPO of the reference recipe: the yardstick for `rlp train`."


@dataclass(frozen=True)
class RecipeConfig:
    """One run: the recipe's model, PPO settings, league mix and env kwargs, plus shape,
    budget and mode."""

    model: TransformerLSTMModelSpec
    training: PPOTraining
    """Its `train_batch_size` is `num_games * rollout`."""
    league: LeagueSpec
    """The recipe's `league:` block: `opponent_mix` (a schedule by env steps), `slots`."""
    device: str = "cpu"
    env_steps: int = 100_000
    """Budget; whole iterations are run, at least one."""
    num_games: int = 128
    rollout: int = 32
    """Frames each game plays per iteration (at most `model.max_seq_len`)."""
    snapshot_every: int = 100_000
    """Env steps between freezes of main into the snapshot ring."""
    captured: bool = False
    """Acting and the minibatch update as CUDA graphs (CUDA only); else eager."""
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
    def minibatches(self) -> int:
        """Minibatches per epoch: the batch over `minibatch_size`, at least one."""
        return max(1, self.batch_size // self.training.minibatch_size)

    @property
    def parts(self) -> tuple[slice, slice]:
        """(own features, opponent frame) of a raw observation: `model.obs_split`."""
        split = self.model.obs_split or {}
        return slice(*split["self"]), slice(*split["opponent"])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    default_device = "cuda" if torch.cuda.is_available() else "cpu"
    parser.add_argument("--device", choices=("cpu", "cuda"), default=default_device)
    parser.add_argument(
        "--captured",
        action="store_true",
        help="acting and the minibatch update as CUDA graphs (a GPU yardstick; CUDA only)",
    )
    parser.add_argument("--env-steps", type=int, default=RecipeConfig.env_steps)
    parser.add_argument("--num-games", type=int, default=RecipeConfig.num_games)
    parser.add_argument("--rollout", type=int, default=RecipeConfig.rollout, help="frames/game")
    recipe = "default: the recipe's"
    parser.add_argument(
        "--snapshot-every", type=int, help=f"{recipe} league.snapshot_every_env_steps"
    )
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
    if spec.league is None:
        raise ValueError(f"{RECIPE.name} has no league: block, so no opponent mix")
    sizes = {"layers": args.layers, "d_model": args.d_model, "heads": args.heads}
    sizes |= {"kv_heads": args.kv_heads, "lstm_cell_size": args.lstm, "history": args.history}
    sizes = {key: value for key, value in sizes.items() if value is not None}
    ppo = {"minibatch_size": args.minibatch, "num_epochs": args.epochs}
    ppo = {key: value for key, value in ppo.items() if value is not None}
    ppo["train_batch_size"] = args.num_games * args.rollout
    snapshot_every = args.snapshot_every or spec.league.snapshot_every_env_steps
    shape = ("device", "env_steps", "num_games", "rollout", "captured", "seed")
    return RecipeConfig(
        model=TransformerLSTMModelSpec.model_validate(spec.model.model_dump() | sizes),
        training=PPOTraining.model_validate(spec.training.model_dump(by_alias=True) | ppo),
        league=spec.league,
        snapshot_every=snapshot_every or RecipeConfig.snapshot_every,
        threads=args.threads or spec.resources.torch_threads or 1,
        duel_settings=dict(spec.env.kwargs),
        **{key: getattr(args, key) for key in shape},
    )
