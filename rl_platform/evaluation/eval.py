"""`rlp eval`: one policy's returns, lengths, win rate and reward components over N episodes.

In two-player envs the evaluated policy plays `opponent` (default: the env's strongest scripted
agent, see `DEFAULT_OPPONENTS`) from the seat `seat` picks: `first` (the first agent, e.g.
`player_0`, the first mover in connect four), `second`, or `alternate` (episode i in the first
seat when i is even), which is the fair measure when moving first is an advantage. The duel,
played to its own end, runs the games of a seat in chunks in its vectorized arena
(`arena_games.py`); other envs, and duels cut by `max_steps`, run episode by episode. Records
are folded into a running summary as they finish, so any `-n` plays in bounded memory, and
Ctrl+C (a `KeyboardInterrupt` between two steps) ends it at once.
"""

import time
from collections.abc import Callable
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.evaluation.arena_games import arena_plays, arena_records
from rl_platform.evaluation.envs import AgentEnv, EnvShape, EnvTarget, probe_env, resolve_env
from rl_platform.evaluation.rollout import EpisodeRecord, Rollout, RolloutHooks
from rl_platform.evaluation.summary import SeatTally
from rl_platform.policies import EnvContext, Policy, PolicyURI, load_policy, parse_policy_uri

DEFAULT_OPPONENTS = {
    "rlp/Duel-v0": "scripted://duel/based",
    "pettingzoo/connect_four_v3": "scripted://connect_four/one_ply",
}
POLICY_KEY, OPPONENT_KEY = "policy", "opponent"
SEATS = ("first", "second", "alternate")


def policy_for(
    uri: PolicyURI, *, target: EnvTarget, shape: EnvShape, agent: str, sample: bool
) -> Policy:
    observation_space, action_space = shape.spaces[agent]
    context = EnvContext(target.env_id, observation_space, action_space)
    return load_policy(uri, env=context, sample=sample)


def check_episodes(episodes: int) -> None:
    if episodes < 1:
        raise UserError(f"--episodes must be >= 1, got {episodes}")


def evaluate(
    *,
    policy: str,
    env: str | None,
    episodes: int,
    seed: int = 0,
    opponent: str | None = None,
    sample: bool = False,
    parallel: int = 8,
    max_steps: int | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
    seat: str = "first",
    on_games_done: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run the evaluation and return one flat JSON-ready dict (see docs/evaluation.md).
    `on_episode` sees each record as it is folded; `on_games_done(n)` the games over so far
    while the duel's arena plays a batch (progress before the batch's records come)."""
    check_episodes(episodes)
    check_seat(seat)
    uri = parse_policy_uri(policy)
    opponent_uri = parse_policy_uri(opponent) if opponent else None
    target = resolve_env(env, policies=[u for u in (uri, opponent_uri) if u is not None])
    shape = probe_env(target)
    seats, policies = seat_policies(uri, opponent_uri, target, shape, sample)
    if OPPONENT_KEY not in policies and seat != "first":
        raise UserError(f"--seat {seat} applies to two-player envs; {target.env_id} is not one")
    started = time.monotonic()
    tally = SeatTally(POLICY_KEY)
    if OPPONENT_KEY in policies and arena_plays(target, max_steps=max_steps):
        # The duel to its own end: the games of a seat in chunks in the vectorized arena.
        records = arena_records(
            policies, episodes=episodes, seat=seat, seed=seed, env_kwargs=target.kwargs,
            on_games_done=on_games_done,
        )  # fmt: skip
    else:
        records = _rollout(
            target, policies, seat_plan(seats, seat), seed=seed, parallel=parallel,
            max_steps=max_steps,
        ).play(episodes)  # fmt: skip
    played = 0
    for record in records:  # folded as they finish: any -n in bounded memory
        tally.add(record)
        played += 1
        if on_episode is not None:
            on_episode(record)
    result: dict[str, Any] = {
        "policy": uri.text,
        "env": target.env_id,
        "episodes": played,
        "seed": seed,
        "sample": sample,
    }
    if OPPONENT_KEY in policies:
        result["opponent"] = policies[OPPONENT_KEY].label
        first_seat = next(a for a, k in seats.items() if k == POLICY_KEY)
        result["seat"] = first_seat if seat == "first" else seat
    result |= tally.summary()
    result["wall_s"] = round(time.monotonic() - started, 3)
    return result


def play_episodes(
    target: EnvTarget,
    policies: dict[str, Policy],
    seats: Callable[[int], dict[str, str]],
    *,
    episodes: int,
    seed: int,
    parallel: int,
    max_steps: int | None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> list[EpisodeRecord]:
    """`episodes` episodes of `policies` seated by `seats` (episode index -> agent -> key)."""
    rollout = _rollout(
        target, policies, seats, seed=seed, parallel=parallel, max_steps=max_steps,
        on_episode=on_episode,
    )  # fmt: skip
    return rollout.run(episodes)


def _rollout(
    target: EnvTarget,
    policies: dict[str, Policy],
    seats: Callable[[int], dict[str, str]],
    *,
    seed: int,
    parallel: int,
    max_steps: int | None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> Rollout:
    return Rollout(
        make_env=lambda: AgentEnv(target),
        policies=policies,
        seats=seats,
        seed=seed,
        parallel=parallel,
        max_steps=max_steps,
        hooks=RolloutHooks(on_episode=on_episode),
    )


def check_seat(seat: str) -> None:
    if seat not in SEATS:
        raise UserError(f"--seat must be one of {', '.join(SEATS)}, got {seat!r}")


def seat_plan(seats: dict[str, str], seat: str) -> Callable[[int], dict[str, str]]:
    """Episode index -> agent-to-policy seating; `seats` puts the policy in the first seat."""
    swapped = {
        agent: OPPONENT_KEY if key == POLICY_KEY else POLICY_KEY for agent, key in seats.items()
    }
    if seat == "second":
        return lambda _index: swapped
    if seat == "alternate":
        return lambda index: seats if index % 2 == 0 else swapped
    return lambda _index: seats


def seat_policies(
    uri: PolicyURI,
    opponent: PolicyURI | None,
    target: EnvTarget,
    shape: EnvShape,
    sample: bool,
) -> tuple[dict[str, str], dict[str, Policy]]:
    first = shape.agent_ids[0]
    policies = {POLICY_KEY: policy_for(uri, target=target, shape=shape, agent=first, sample=sample)}
    if not shape.two_player:
        if opponent is not None:
            raise UserError(f"--opponent applies to two-player envs; {target.env_id} is not one")
        return dict.fromkeys(shape.agent_ids, POLICY_KEY), policies
    if opponent is None:
        default = DEFAULT_OPPONENTS.get(target.env_id)
        if default is None:
            raise UserError(f"{target.env_id} is a two-player env: pass --opponent URI")
        opponent = parse_policy_uri(default)
    second = shape.agent_ids[1]
    policies[OPPONENT_KEY] = policy_for(
        opponent, target=target, shape=shape, agent=second, sample=sample
    )
    return {first: POLICY_KEY, second: OPPONENT_KEY}, policies
