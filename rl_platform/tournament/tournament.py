"""Round-robin tournaments between a run's league members, offline on CPU: the one entry point.

Players come from the one path from a name to a playable policy, `league://RUN/ID`
(`rl_platform.policies.load_policy`): frozen members with their stored weights, learners (main,
exploiters) with the run's latest checkpoint, scripted members from the scripted registry.
`play_round_robin` picks how the games are played: the duel without env wrappers in its
vectorized arena (arena_round_robin.py), any other two-player env through the evaluation
rollout (rollout_round_robin.py). Seats alternate as in `tournament_schedule`; results update
the members' openskill ratings and game records.

Guests (`--guest URI`) are policies from outside the league, of any architecture
(`policy://FILE.safetensors`, `checkpoint://OTHER_RUN`, `scripted://...`): they play the same
round robin and are rated beside the members from the same games, but are not stored in
`league.json`, so a league never has to load a model its slots cannot hold.
"""

from collections.abc import Mapping, Sequence
from pathlib import Path

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.evaluation.arena_games import arena_plays, game_settings
from rl_platform.evaluation.envs import EnvTarget, probe_env
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.pool import LeaguePool
from rl_platform.league.ratings import Rating, rate_game, with_game
from rl_platform.policies import EnvContext, Policy, load_policy
from rl_platform.tournament.arena_round_robin import play_arena_round_robin
from rl_platform.tournament.report import GameResult, TournamentReport
from rl_platform.tournament.rollout_round_robin import play_rollout_round_robin


def tournament_ids(
    pool: LeaguePool, ids: Sequence[str] | None, *, has_checkpoint: bool
) -> list[str]:
    """`ids` in the given order (checked, duplicates dropped), by default every member that can
    play without training: scripted, frozen, and main when the run has a checkpoint."""
    if ids:
        unknown = [member_id for member_id in ids if member_id not in pool]
        if unknown:
            raise UserError(f"cannot play {unknown}: not members of this league ({pool.ids})")
        return list(dict.fromkeys(ids))
    return [
        m.id
        for m in pool.members
        if m.kind is MemberKind.SCRIPTED
        or m.is_frozen
        or (m.id == MAIN_MODULE_ID and has_checkpoint)
    ]


def member_policies(
    run_dir: Path,
    ids: Sequence[str],
    *,
    target: EnvTarget,
    guests: Mapping[str, str] | None = None,
) -> dict[str, Policy]:
    """One sampling policy per member id, then per guest (label -> policy URI), built once for
    the env's first agent's spaces."""
    shape = probe_env(target)
    if not shape.two_player:
        raise UserError(f"tournaments need a two-player env; {target.env_id} is not one")
    observation_space, action_space = shape.spaces[shape.agent_ids[0]]
    context = EnvContext(target.env_id, observation_space, action_space)
    players = {
        member_id: load_policy(f"league://{run_dir}/{member_id}", env=context, sample=True)
        for member_id in ids
    }
    for label, uri in (guests or {}).items():
        players[label] = load_policy(uri, env=context, sample=True)
    return players


def guest_labels(uris: Sequence[str], *, member_ids: Sequence[str]) -> dict[str, str]:
    """A label per guest URI: `guest:` and the file, run or agent name it points at."""
    labels: dict[str, str] = {}
    for uri in uris:
        name = Path(uri.split("?")[0].rstrip("/")).name.removesuffix(".safetensors")
        label = f"guest:{name}"
        while label in labels or label in member_ids:
            label += "'"
        labels[label] = uri
    return labels


def play_round_robin(
    policies: Mapping[str, Policy], *, target: EnvTarget, games: int, seed: int = 0
) -> TournamentReport:
    """Every pair plays `games` games (seats alternating); results from the first seat's side."""
    if arena_plays(target):
        return play_arena_round_robin(
            policies, games=games, seed=seed, env_kwargs=game_settings(target.kwargs)
        )
    return play_rollout_round_robin(policies, target=target, games=games, seed=seed)


def apply_ratings(
    pool: LeaguePool, results: Sequence[GameResult], *, guests: Sequence[str] = ()
) -> dict[str, Member]:
    """Update both players' openskill ratings and game records for every result, in order:
    members in the pool, guests in records of their own (returned, by label)."""
    guest_records = {
        label: Member(id=_record_id(label), kind=MemberKind.CHECKPOINT) for label in guests
    }

    def record(player: str) -> Member:
        return guest_records[player] if player in guest_records else pool.get(player)

    def store(player: str, member: Member) -> None:
        if player in guest_records:
            guest_records[player] = member
        else:
            pool.update_member(member)

    for first, second, outcome in results:
        a, b = record(first), record(second)
        new_a, new_b = rate_game(Rating(a.mu, a.sigma), Rating(b.mu, b.sigma), outcome=outcome)
        store(first, with_game(a, outcome, new_a))
        store(second, with_game(b, outcome.flipped(), new_b))
    return guest_records


def _record_id(label: str) -> str:
    """A guest's label as a valid member id (its record is never stored)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in label)
