"""Duel games for benchmarks, as `rlp eval --seat alternate` plays them: the vectorized arena
of `rl_platform.evaluation.arena_games`, half the games with the evaluated policy first (one
seed per half), every game to its end. The one game loop of every benchmark that scores a
policy; none writes its own."""

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from torch import nn

from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.evaluation.arena_games import arena_episodes
from rl_platform.evaluation.summary import summarize
from rl_platform.policies import EnvContext, FunctionPolicy, Policy, load_policy
from rl_platform.teachers import DUEL_ENV


def duel_context() -> EnvContext:
    """The duel as one player sees it: what `load_policy` and `learned_policy` need."""
    return EnvContext(DUEL_ENV, observation_space(), action_space())


def duel_policy(uri: str, *, sample: bool = False) -> Policy:
    """A policy URI (`scripted://duel/based`, `checkpoint://RUN`, ...) playing the duel."""
    return load_policy(uri, env=duel_context(), sample=sample)


def greedy_net_policy(label: str, net: nn.Module) -> Policy:
    """A plain torch net from observations to logits, acting greedily."""

    def act(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        with torch.no_grad():
            return net(torch.from_numpy(np.asarray(obs, dtype=np.float32))).argmax(-1).numpy()

    return FunctionPolicy(label, act)


def play(
    policy: Policy,
    opponent: Policy,
    *,
    games: int,
    seed: int,
    env_kwargs: Mapping[str, Any] | None = None,
) -> dict[str, float]:
    """`policy`'s results over `games` games against `opponent`: win, draw and loss rates,
    `score` (a draw counts 1/2), mean return and length, and the share decided on the clock."""
    records = arena_episodes(
        {"policy": policy, "opponent": opponent},
        episodes=games,
        seat="alternate",
        seed=seed,
        env_kwargs=env_kwargs or {},
    )
    summary = summarize(records, "policy")
    rates = {f"{o}_rate": float(summary.get(f"{o}_rate", 0.0)) for o in ("win", "draw", "loss")}
    return rates | {
        "score": rates["win_rate"] + rates["draw_rate"] / 2,
        "return_mean": float(summary["return_mean"]),
        "length_mean": float(summary["length_mean"]),
        "timed_out_rate": float(summary.get("timed_out_rate", 0.0)),
    }
