"""Aggregate episode records into the numbers `rlp eval` and `rlp run` report (plain dicts)."""

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rl_platform.evaluation.rollout import EpisodeRecord


def describe(values: Sequence[float], prefix: str) -> dict[str, float]:
    """`{prefix}_mean/_std/_min/_max` (population std); NaN-free for an empty input."""
    if not values:
        return {}
    array = np.asarray(values, dtype=np.float64)
    return {
        f"{prefix}_mean": float(array.mean()),
        f"{prefix}_std": float(array.std()),
        f"{prefix}_min": float(array.min()),
        f"{prefix}_max": float(array.max()),
    }


def seats_of(records: Iterable[EpisodeRecord], key: str) -> list[tuple[EpisodeRecord, str]]:
    """Every (episode, agent) in which policy `key` played."""
    return [(r, agent) for r in records for agent, k in r.seats.items() if k == key]


def summarize(records: Sequence[EpisodeRecord], key: str) -> dict[str, Any]:
    """Return, length, outcome rates and reward-component means of policy `key`'s seats."""
    seats = seats_of(records, key)
    out: dict[str, Any] = {"seats": len(seats)}
    out |= describe([r.returns.get(agent, 0.0) for r, agent in seats], "return")
    out |= describe([float(r.length) for r, _ in seats], "length")
    outcomes = [r.outcomes.get(agent) for r, agent in seats]
    decided = [o for o in outcomes if o is not None]
    if decided:
        for name in ("win", "draw", "loss"):
            out[f"{name}_rate"] = decided.count(name) / len(decided)
    endings = [r.ended_by for r, _ in seats if r.ended_by is not None]
    if endings:  # envs that say how games end (the duel): the share decided on the clock
        out["timed_out_rate"] = endings.count("time") / len(endings)
    out["reward_components"] = _component_means(seats)
    limited = sum(r.truncated_by_limit for r, _ in seats)
    if limited:
        out["cut_by_max_steps"] = limited
    return out


def _component_means(seats: list[tuple[EpisodeRecord, str]]) -> dict[str, float]:
    names = sorted({name for r, agent in seats for name in r.components.get(agent, {})})
    if not names:
        return {}
    return {
        name: float(np.mean([r.components.get(agent, {}).get(name, 0.0) for r, agent in seats]))
        for name in names
    }


def head_to_head(records: Sequence[EpisodeRecord], key: str) -> dict[str, dict[str, Any]]:
    """Two-player games: `{opponent key: {games, win_rate, draw_rate, loss_rate}}` for `key`."""
    table: dict[str, list[str]] = {}
    for record, agent in seats_of(records, key):
        others = [k for a, k in record.seats.items() if a != agent]
        outcome = record.outcomes.get(agent)
        if len(others) != 1 or outcome is None:
            continue
        table.setdefault(others[0], []).append(outcome)
    return {
        other: {
            "games": len(outcomes),
            **{
                f"{name}_rate": outcomes.count(name) / len(outcomes)
                for name in ("win", "draw", "loss")
            },
        }
        for other, outcomes in sorted(table.items())
    }
