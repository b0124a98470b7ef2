"""Round-robin duel tournaments between league members, offline and on CPU (no Ray).

Frozen members play with their stored weights as torch policies (torch_policy.py), `main` with
the weights of the run's latest checkpoint, scripted members with their scripted agent. Each
ordered seating of a pair plays its games at once in a vectorized `DuelCore` (arena.py); seats
alternate as in `tournament_schedule`. Results update the members' openskill ratings and game
records, and a matchup heat map is written with matplotlib.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rl_platform.envs.duel import NUM_ACTIONS, OBS_SIZE
from rl_platform.envs.duel.arena import run_matches
from rl_platform.errors import UserError
from rl_platform.league.leaderboard import MatchupMatrix, matchup_matrix, tournament_schedule
from rl_platform.league.members import MemberKind
from rl_platform.league.pool import LeaguePool
from rl_platform.league.ratings import Rating, rate_game, with_game
from rl_platform.league.results import Outcome
from rl_platform.league.scripted import DUEL_ENV, scripted_act
from rl_platform.league.torch_policy import PolicyFactory, policy_factory
from rl_platform.module_ids import MAIN_MODULE_ID

GameResult = tuple[str, str, Outcome]


@dataclass(frozen=True)
class TournamentReport:
    results: list[GameResult]
    matrix: MatchupMatrix


def member_policies(
    pool: LeaguePool,
    *,
    model: Any,
    main_weights: Mapping[str, Any] | None,
    ids: Sequence[str] | None = None,
) -> dict[str, PolicyFactory]:
    """Policy makers for the members that can play (frozen, scripted, main with weights)."""
    factories: dict[str, PolicyFactory] = {}
    for member in pool.members:
        if ids is not None and member.id not in ids:
            continue
        if member.kind is MemberKind.SCRIPTED:
            act = scripted_act(env_id=DUEL_ENV, agent=str(member.metadata.get("agent", member.id)))
            factories[member.id] = lambda act=act: act
        elif member.is_frozen:
            factories[member.id] = _weights_factory(model, pool.load_weights(member.id))
        elif member.id == MAIN_MODULE_ID and main_weights is not None:
            factories[member.id] = _weights_factory(model, main_weights)
    missing = sorted(set(ids or ()) - set(factories))
    if missing:
        raise UserError(f"cannot play {missing}: not league members with weights or a script")
    return factories


def _weights_factory(model: Any, weights: Mapping[str, Any]) -> PolicyFactory:
    return policy_factory(model=model, weights=weights, obs_dim=OBS_SIZE, num_actions=NUM_ACTIONS)


def play_round_robin(
    players: Mapping[str, PolicyFactory],
    *,
    games: int,
    seed: int = 0,
    env_kwargs: Mapping[str, Any] | None = None,
) -> TournamentReport:
    """Every pair plays `games` games (seats alternating); results from the first seat's side."""
    ids = list(players)
    seatings = Counter(tournament_schedule(ids, games))
    results: list[GameResult] = []
    for index, ((first, second), count) in enumerate(sorted(seatings.items())):
        match = run_matches(
            players[first](),
            players[second](),
            num_games=count,
            seed=seed + 7919 * index,  # distinct spawn jitter per seating
            **dict(env_kwargs or {}),
        )
        results += [(first, second, Outcome.WIN)] * match.wins_a
        results += [(first, second, Outcome.LOSS)] * match.wins_b
        results += [(first, second, Outcome.DRAW)] * match.draws
    return TournamentReport(results=results, matrix=matchup_matrix(ids, results))


def apply_ratings(pool: LeaguePool, results: Sequence[GameResult]) -> None:
    """Update both players' openskill ratings and game records for every result, in order."""
    for first, second, outcome in results:
        a, b = pool.get(first), pool.get(second)
        new_a, new_b = rate_game(Rating(a.mu, a.sigma), Rating(b.mu, b.sigma), outcome=outcome)
        pool.update_member(with_game(a, outcome, new_a))
        pool.update_member(with_game(b, outcome.flipped(), new_b))


def write_heatmap(matrix: MatchupMatrix, path: Path, *, title: str = "") -> Path:
    """PNG of row-vs-column score (draw = 1/2), annotated, NaN where a pair never played."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    scores = matrix.win_rate()
    n = len(matrix.ids)
    size = max(4.0, 0.6 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size, size * 0.85))
    image = ax.imshow(np.ma.masked_invalid(scores), cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), matrix.ids, rotation=45, ha="right")
    ax.set_yticks(range(n), matrix.ids)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player (row score vs column)")
    if n <= 20:  # numbers become unreadable beyond that
        for i in range(n):
            for j in range(n):
                if np.isfinite(scores[i, j]):
                    ax.text(j, i, f"{scores[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label="score (win = 1, draw = 1/2)")
    ax.set_title(title or "league matchups")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
