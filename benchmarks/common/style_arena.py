"""A trained duel run against the scripted styles, as `benchmarks/opponent_encoder_value.py`
evaluates it: win rates per style (seats alternating, in the duel's vectorized arena), greedy
and sampled, the mean over each test set (`benchmarks/common/hidden_intent.py`), against each
hidden-intent opponent also per hidden value, and the same for the run's memory-cut twins
(`CUTS`). The trained weights come from `rl_platform.policies.
learned_parts`, the twins from `learned_policy`'s `policy_class` hook.

    from benchmarks.common.style_arena import CUTS, evaluate, print_table
"""

import functools
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.common.arena import duel_context, duel_policy, play
from benchmarks.common.hidden_intent import SPLITS, Split
from rl_platform.envs.duel.scripted import ActFn
from rl_platform.policies import EnvContext, learned_parts, learned_policy
from rl_platform.policies.module_policy import ModulePolicy
from rl_platform.spec import ExperimentSpec

MODES = ("greedy", "sampled")
HISTORY_CUT = "transformer_lstm, history cut"
ALL_MEMORY_CUT = "transformer_lstm, all memory cut"
MEMORY_CUT = "lstm, memory cut"
CUTS: dict[str, dict[str, tuple[str, ...]]] = {
    "transformer_lstm": {HISTORY_CUT: ("kv",), ALL_MEMORY_CUT: ("",)},
    "lstm": {MEMORY_CUT: ("",)},
}
"""Per model, its memory-cut rows and the state entries each resets after every step (name
prefixes; "" is every entry): (c0) forgets the streaming encoder's key/value cache and keeps
its LSTM, (c00) forgets both, so it sees the current frame only; (b0) forgets the LSTM's
state, all the memory (b) has."""


class ForgetfulPolicy(ModulePolicy):
    """A trained recurrent policy that forgets after every step: the state entries whose names
    start with `forgets` go back to their initial value (`CUTS`)."""

    def __init__(self, *args: Any, forgets: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.forgets = forgets

    def act(self, obs: Any, rng: np.random.Generator, *, keys: Sequence[Hashable]) -> np.ndarray:
        actions = super().act(obs, rng, keys=keys)
        self.reset_state(keys, entries=self.forgets)
        return actions


def trained_policy(
    run_dir: Path, *, sample: bool, forgets: tuple[str, ...] | None
) -> tuple[Any, EnvContext]:
    """The run's trained policy (its latest checkpoint); with `forgets`, its memory-cut twin."""
    spec, weights, observation_filter = learned_parts(f"checkpoint://{run_dir}")
    context = duel_context()
    policy_class = None if forgets is None else functools.partial(ForgetfulPolicy, forgets=forgets)
    policy = learned_policy(
        spec,
        weights,
        env=context,
        sample=sample,
        label=spec.name,
        policy_class=policy_class,
        observation_filter=observation_filter,
    )
    return policy, context


def evaluate(
    spec: ExperimentSpec,
    run_dir: Path,
    *,
    games: int,
    forgets: tuple[str, ...] | None,
    sets: Mapping[str, Sequence[str]],
) -> dict[str, float]:
    """Win rates against each style of each test set (`sets`: name -> styles), greedy and
    sampled: `{mode}/{style}`, the set's mean `{mode}/mean/{set}`, and against each
    hidden-intent opponent per hidden value (`{mode}/{opponent}/{value}`). The policy sees
    what it saw in training (its spec's `env.hide`)."""
    row: dict[str, float] = {}
    seed = spec.seed or 0
    for mode in MODES:
        policy, _ = trained_policy(run_dir, sample=mode == "sampled", forgets=forgets)
        for set_name, styles in sets.items():
            for style in styles:
                opponent = duel_policy(f"scripted://duel/{style}")
                row[f"{mode}/{style}"] = play(policy, opponent, games=games, seed=seed)["win_rate"]
            row[f"{mode}/mean/{set_name}"] = float(np.mean([row[f"{mode}/{s}"] for s in styles]))
        for opponent, split in SPLITS.items():
            if any(opponent in styles for styles in sets.values()):
                row |= split_games(policy, opponent, split, games=games, seed=seed, mode=mode)
    return row


def split_games(
    policy: ModulePolicy, opponent: str, split: Split, *, games: int, seed: int, mode: str
) -> dict[str, float]:
    """`policy`'s win rate against a hidden-intent `opponent` in the games of each hidden
    value (`games` games in all, half from each seat). A policy that reads the history wins in
    every kind of game; so can others, partly (sampled play tries attacks at random), so
    compare with the memory-cut rows and the memoryless ceiling."""

    def fresh_policy() -> ActFn:  # recurrent state and history per game row, from scratch
        policy.forget(range(games // 2))
        return lambda obs, rng: policy.act(obs, rng, keys=range(len(obs)))

    # Sampled actions draw from torch's global generator: seeded here, the split does not
    # depend on which styles were evaluated before it.
    torch.manual_seed(seed)
    wins = split(fresh_policy, games=games // 2, seed=seed)
    return {f"{mode}/{opponent}/{value}": rate for value, rate in wins.items()}


def split_columns(row: Mapping[str, float], mode: str, opponent: str) -> list[str]:
    """The per-hidden-value columns of `opponent` in an `evaluate` row, in their order."""
    return [key for key in row if key.startswith(f"{mode}/{opponent}/")]


def print_table(rows: dict[str, dict], styles: Sequence[str], *, set_name: str) -> None:
    """One row per policy: each style of the set and the set's mean, greedy and sampled,
    then each hidden-intent opponent's games per hidden value."""
    columns = [c for mode in MODES for c in (*(f"{mode}/{s}" for s in styles), f"{mode}/mean")]
    columns = [f"{c}/{set_name}" if c.endswith("/mean") else c for c in columns]
    first = next(iter(rows.values()))
    for opponent in (o for o in SPLITS if o in styles):
        columns += [c for mode in MODES for c in split_columns(first, mode, opponent)]
    print("| policy | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |")
