"""Play two scripted (or any vectorized) agents against each other over N games at once."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.seed_tree import SeedTree
from rl_platform.envs.duel.core import DRAW, DuelCore
from rl_platform.envs.duel.scripted import ActFn


@dataclass(frozen=True)
class MatchResult:
    """Outcome counts from player 0's ("a") point of view."""

    wins_a: int
    wins_b: int
    draws: int
    mean_length: float
    """Mean game length in frames."""
    mean_return_a: float = 0.0
    """Player 0's mean episode return (the env's weighted reward)."""
    mean_return_b: float = 0.0
    """Player 1's mean episode return."""
    timed_out: int = 0
    """Games that ended on the clock rather than by a player's last knockout."""

    @property
    def games(self) -> int:
        return self.wins_a + self.wins_b + self.draws

    @property
    def win_rate_a(self) -> float:
        return self.wins_a / self.games


@dataclass(frozen=True)
class GameLog:
    """Per-game results of one batch of games, row i = game i."""

    winner: np.ndarray
    """(N,) 0 or 1 the winning player, `DRAW` a draw."""
    length: np.ndarray
    """(N,) frames played."""
    returns: np.ndarray
    """(N, 2) each player's episode return (the env's weighted reward)."""
    components: dict[str, np.ndarray]
    """Unweighted reward components summed over each game, each (N, 2)."""
    timed_out: np.ndarray
    """(N,) the game ended on the clock rather than by a player's last knockout."""


def play_games(
    agent_a: ActFn,
    agent_b: ActFn,
    *,
    num_games: int,
    seed: int = 0,
    on_frame: Callable[[int], None] | None = None,
    **core_kwargs: Any,
) -> GameLog:
    """Play `num_games` games to completion with `agent_a` as player 0 and `agent_b` as 1.
    `on_frame(games_over)` after each frame: games end between 80 and 900 frames, so a long
    `rlp eval` counts its games while a batch of 4096 plays (seconds each)."""
    core = DuelCore(num_games, seed=seed, **core_kwargs)
    rng = np.random.default_rng(SeedTree(seed).arena_actions())
    obs = core.reset()
    lengths = np.zeros(num_games, np.int64)
    returns = np.zeros((num_games, 2), np.float64)
    components: dict[str, np.ndarray] = {}
    timed_out = np.zeros(num_games, bool)
    while not core.state.done.all():
        actions = np.stack([agent_a(obs[:, 0], rng), agent_b(obs[:, 1], rng)], axis=1)
        running = ~core.state.done
        result = core.step(actions)
        obs = result.obs
        lengths += running
        returns += np.where(running[:, None], result.rewards, 0.0)
        for name, values in result.components.items():
            total = components.setdefault(name, np.zeros((num_games, 2), np.float64))
            total += np.where(running[:, None], values, 0.0)
        timed_out |= result.timed_out & running
        if on_frame is not None:
            on_frame(int(core.state.done.sum()))
    return GameLog(
        winner=core.state.winner.copy(),
        length=lengths,
        returns=returns,
        components=components,
        timed_out=timed_out,
    )


def run_matches(
    agent_a: ActFn, agent_b: ActFn, *, num_games: int, seed: int = 0, **core_kwargs: Any
) -> MatchResult:
    """Play `num_games` games to completion with `agent_a` as player 0 and `agent_b` as 1."""
    log = play_games(agent_a, agent_b, num_games=num_games, seed=seed, **core_kwargs)
    return MatchResult(
        wins_a=int((log.winner == 0).sum()),
        wins_b=int((log.winner == 1).sum()),
        draws=int((log.winner == DRAW).sum()),
        mean_length=float(log.length.mean()),
        mean_return_a=float(log.returns[:, 0].mean()),
        mean_return_b=float(log.returns[:, 1].mean()),
        timed_out=int(log.timed_out.sum()),
    )


def wins_by_hidden_value(
    make_agent: Callable[[], ActFn],
    opponent: ActFn,
    hidden_value: Callable[[np.ndarray], np.ndarray],
    values: Sequence[Any],
    *,
    games: int,
    seed: int,
) -> dict[Any, float]:
    """An agent's win rate against `opponent` in the games of each of its hidden values
    (`hidden_value(opponent_obs) -> [B]`, e.g. `counter`'s blind spot, `shifter`'s plan):
    `games` games from each seat, each half seeded by `SeedTree.seat_order`. `make_agent()`
    gives the agent for each seat's batch of games, so a learned policy that keeps state per
    game row starts afresh."""
    wins: dict[Any, list[np.ndarray]] = {value: [] for value in values}
    for seat in (0, 1):
        # A fresh core with the game's seed draws the same hidden values as the games played.
        seat_seed = SeedTree(seed).seat_order(seat)
        hidden = hidden_value(DuelCore(games, seed=seat_seed).reset()[:, 1 - seat])
        agent = make_agent()
        players = (agent, opponent) if seat == 0 else (opponent, agent)
        log = play_games(*players, num_games=games, seed=seat_seed)
        for value in values:
            wins[value].append((log.winner == seat)[hidden == value])
    return {value: float(np.concatenate(won).mean()) for value, won in wins.items()}
