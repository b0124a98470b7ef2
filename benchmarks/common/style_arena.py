"""A trained duel run against the scripted styles, as `benchmarks/opponent_encoder_value.py`
evaluates it: win rates per style (seats alternating, in the duel's vectorized arena), greedy
and sampled, the mean over styles, against `counter` also per blind spot, and the same for the
run's memory-cut twins (`CUTS`). The trained weights come from `rl_platform.policies.
learned_parts`, the twins from `learned_policy`'s `policy_class` hook.

    from benchmarks.common.style_arena import CUTS, evaluate, print_table
"""

import functools
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from benchmarks.common.arena import duel_context, duel_policy, play
from rl_platform.envs.duel.counter import BLIND_SPOTS, wins_by_blind_spot
from rl_platform.envs.duel.scripted import ActFn
from rl_platform.policies import EnvContext, learned_parts, learned_policy
from rl_platform.policies.module_policy import ModulePolicy
from rl_platform.spec import ExperimentSpec

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
    spec, weights = learned_parts(f"checkpoint://{run_dir}")
    context = duel_context()
    policy_class = None if forgets is None else functools.partial(ForgetfulPolicy, forgets=forgets)
    policy = learned_policy(
        spec, weights, env=context, sample=sample, label=spec.name, policy_class=policy_class
    )
    return policy, context


def evaluate(
    spec: ExperimentSpec,
    run_dir: Path,
    *,
    games: int,
    forgets: tuple[str, ...] | None,
    styles: Sequence[str],
) -> dict:
    row: dict[str, float] = {}
    for mode in ("greedy", "sampled"):
        policy, _ = trained_policy(run_dir, sample=mode == "sampled", forgets=forgets)
        rates = []
        for style in styles:
            opponent = duel_policy(f"scripted://duel/{style}")
            result = play(policy, opponent, games=games, seed=spec.seed or 0)
            rates.append(result["win_rate"])
            row[f"{mode}/{style}"] = rates[-1]
        row[f"{mode}/mean"] = float(np.mean(rates))
        if "counter" in styles:
            row |= counter_by_blind_spot(policy, games=games, seed=spec.seed or 0, mode=mode)
    return row


def counter_by_blind_spot(
    policy: ModulePolicy, *, games: int, seed: int, mode: str
) -> dict[str, float]:
    """`policy`'s win rate against `counter` in the games of each of its blind spots (`games`
    games in all, half from each seat). A policy that reads `counter`'s history wins in all
    three kinds of game; so can others, partly (sampled play tries attacks at random, and the
    frame keeps the HP a punished attack cost), so compare with the memory-cut rows."""

    def fresh_policy() -> ActFn:  # recurrent state and history per game row, from scratch
        policy.forget(range(games // 2))
        return lambda obs, rng: policy.act(obs, rng, keys=range(len(obs)))

    # Sampled actions draw from torch's global generator: seeded here, the split does not
    # depend on which styles were evaluated before it.
    torch.manual_seed(seed)
    wins = wins_by_blind_spot(fresh_policy, games=games // 2, seed=seed)
    return {f"{mode}/counter/{spot.name.lower()}": rate for spot, rate in wins.items()}


def print_table(rows: dict[str, dict], styles: Sequence[str]) -> None:
    columns = [f"{mode}/{s}" for mode in ("greedy", "sampled") for s in (*styles, "mean")]
    if "counter" in styles:
        spots = [f"counter/{spot.name.lower()}" for spot in BLIND_SPOTS]
        columns += [f"{mode}/{spot}" for mode in ("greedy", "sampled") for spot in spots]
    print("| policy | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, row in rows.items():
        print(f"| {name} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |")
