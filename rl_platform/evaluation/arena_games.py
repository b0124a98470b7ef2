"""Policies playing the duel in its vectorized arena: every game of a seating at once.

`rlp eval`, evaluation during training and `rlp league tournament` play the duel here when
the games run to their own end (no `max_steps` cut, no env wrappers): one batched forward pass
per policy and frame instead of one per game (`envs.duel.arena`). A learned policy keeps one
recurrent state (and, for transformer_lstm, one opponent-history window) per game row:
`ArenaSeat` names each row of a seating with its own key, and the policy forgets those keys
once the seating is over, so every game starts from the policy's initial state.
"""

import functools
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any

import numpy as np
import torch

from rl_platform.base.seed_tree import SeedTree
from rl_platform.envs.duel.arena import GameLog, play_games
from rl_platform.envs.duel.core import DRAW
from rl_platform.envs.duel.single_game import AGENT_IDS
from rl_platform.evaluation.envs import EnvTarget
from rl_platform.evaluation.rollout import EpisodeRecord
from rl_platform.policies import Policy
from rl_platform.teachers import DUEL_ENV

ARENA_CHUNK = 4096
"""Games the arena plays at once: any `-n` plays in bounded memory, and Ctrl+C is seen
between frames (a `-n 1e9` once allocated a billion games at once)."""
# Settings a run's env kwargs may hold that do not shape the games (the arena seeds them).
_NOT_GAME_SETTINGS = ("seed", "render_mode")


def arena_plays(target: EnvTarget, *, max_steps: int | None = None) -> bool:
    """The vectorized arena plays the duel on raw observations, to the game's own end: a run
    trained with wrappers, or games cut by a step limit (`max_steps`), take the per-episode
    rollout."""
    return target.env_id == DUEL_ENV and not target.wrappers and max_steps is None


def game_settings(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The duel settings in a spec's `env.kwargs` that shape games (zone, rewards, limits)."""
    return {k: v for k, v in env_kwargs.items() if k not in _NOT_GAME_SETTINGS}


class ArenaSeat:
    """A `Policy` as the arena's `act(obs[B, D], rng)`, one state key per game row."""

    def __init__(self, policy: Policy, *, seating: int) -> None:
        self.policy = policy
        self.seating = seating
        self.keys: list[Hashable] = []

    def __call__(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if len(self.keys) != len(obs):
            self.keys = [(self.seating, row) for row in range(len(obs))]
        return self.policy.act(obs, rng, keys=self.keys)

    def leave(self) -> None:
        self.policy.forget(self.keys)


def games_per_seat(episodes: int, seat: str) -> tuple[int, int]:
    """Games with the evaluated policy as player 0 and as player 1 (`seat`: first, second,
    alternate; alternating gives player 0 the extra game of an odd count)."""
    first = {"first": episodes, "second": 0}.get(seat, (episodes + 1) // 2)
    return first, episodes - first


def arena_episodes(
    policies: Mapping[str, Policy],
    *,
    episodes: int,
    seat: str,
    seed: int,
    env_kwargs: Mapping[str, Any],
) -> list[EpisodeRecord]:
    """`episodes` games of `policies` ({key: policy}, the evaluated one first, then its
    opponent) as episode records, numbered as `rlp eval`'s seat plan numbers them."""
    records = arena_records(
        policies, episodes=episodes, seat=seat, seed=seed, env_kwargs=env_kwargs
    )
    return sorted(records, key=lambda record: record.index)


def arena_records(
    policies: Mapping[str, Policy],
    *,
    episodes: int,
    seat: str,
    seed: int,
    env_kwargs: Mapping[str, Any],
    on_games_done: Callable[[int], None] | None = None,
) -> Iterator[EpisodeRecord]:
    """The records of `arena_episodes`, a chunk of at most `ARENA_CHUNK` games at a time
    (player 0's games first), for a caller that folds them into a summary. `on_games_done(n)`
    counts the games over so far while a chunk plays (progress of a long `rlp eval`)."""
    before = 0  # games of the chunks already played
    for player, count in enumerate(games_per_seat(episodes, seat)):
        for chunk, start in enumerate(range(0, count, ARENA_CHUNK)):
            size = min(ARENA_CHUNK, count - start)
            if seat == "alternate":
                indices = range(player + 2 * start, player + 2 * (start + size), 2)
            else:
                indices = range(start, start + size)
            games_seed = SeedTree(seed).arena_chunk(player=player, chunk=chunk)
            on_frame = None
            if on_games_done is not None:
                on_frame = functools.partial(_games_done_from, before, on_games_done)
            yield from _play_chunk(
                policies, player=player, size=size, seed=games_seed, env_kwargs=env_kwargs,
                indices=indices, on_frame=on_frame,
            )  # fmt: skip
            before += size


def _games_done_from(before: int, on_games_done: Callable[[int], None], over: int) -> None:
    on_games_done(before + over)


def _play_chunk(
    policies: Mapping[str, Policy],
    *,
    player: int,
    size: int,
    seed: int,
    env_kwargs: Mapping[str, Any],
    indices: range,
    on_frame: Callable[[int], None] | None = None,
) -> list[EpisodeRecord]:
    """`size` games with the evaluated policy (the first of `policies`) as `player`."""
    (key, policy), (opponent_key, opponent) = policies.items()
    seats = [ArenaSeat(policy, seating=player), ArenaSeat(opponent, seating=player)]
    if player == 1:
        seats.reverse()
    torch.manual_seed(seed)  # sampled actions draw with torch
    log = play_games(
        *seats, num_games=size, seed=seed, on_frame=on_frame, **game_settings(env_kwargs)
    )
    for arena_seat in seats:
        arena_seat.leave()
    keys = (key, opponent_key) if player == 0 else (opponent_key, key)
    return _records(log, keys, indices)


def _records(log: GameLog, keys: tuple[str, str], indices: range) -> list[EpisodeRecord]:
    """One record per game of `log` (game i is episode `indices[i]`)."""
    records = []
    for game, index in enumerate(indices):
        winner = int(log.winner[game])
        records.append(
            EpisodeRecord(
                index=index,
                seats=dict(zip(AGENT_IDS, keys, strict=True)),
                returns={a: float(log.returns[game, p]) for p, a in enumerate(AGENT_IDS)},
                length=int(log.length[game]),
                outcomes={a: _outcome(winner, p) for p, a in enumerate(AGENT_IDS)},
                components={
                    a: {name: float(v[game, p]) for name, v in log.components.items()}
                    for p, a in enumerate(AGENT_IDS)
                },
                ended_by="time" if log.timed_out[game] else "knockout",
            )
        )
    return records


def _outcome(winner: int, player: int) -> str:
    if winner == DRAW:
        return "draw"
    return "win" if winner == player else "loss"
