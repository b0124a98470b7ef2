"""`rlp run`: several policies share the agents of an env by proportion; results per policy.

`-p URI,proportion=3 -p URI,proportion=5` over N episodes of a two-player game fills the
2N seats with exactly round(2N * 3/8) and round(2N * 5/8) seats (largest remainder), shuffled
with the seed, so every game's two seats are drawn by proportion and mirror matches happen.
Seats are allocated `PLAN_CHUNK` episodes at a time and results are folded as episodes finish,
so any `-n` runs in bounded memory.
"""

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.evaluation.envs import AgentEnv, probe_env, resolve_env
from rl_platform.evaluation.eval import check_episodes, policy_for
from rl_platform.evaluation.rollout import EpisodeRecord, Rollout, RolloutHooks
from rl_platform.evaluation.summary import SeatTally
from rl_platform.policies import PolicyURI, parse_policy_uri

_OPTIONS = {"proportion"}
PLAN_CHUNK = 4096
"""Episodes whose seats are allocated together (exact proportions within each chunk)."""


@dataclass(frozen=True)
class PolicyShare:
    uri: PolicyURI
    proportion: float


def parse_share(text: str) -> PolicyShare:
    """`URI[,proportion=P]` (P > 0, default 1)."""
    uri_text, *options = text.split(",")
    proportion = 1.0
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or key.strip() not in _OPTIONS:
            raise UserError(f"-p {text!r}: options are {sorted(_OPTIONS)}, e.g. URI,proportion=3")
        try:
            proportion = float(value)
        except ValueError:
            raise UserError(f"-p {text!r}: proportion must be a number, got {value!r}") from None
        if not (math.isfinite(proportion) and proportion > 0):
            raise UserError(f"-p {text!r}: proportion must be a finite number > 0, got {value}")
    return PolicyShare(parse_policy_uri(uri_text), proportion)


def seat_counts(proportions: Sequence[float], total: int) -> list[int]:
    """Split `total` seats by proportion, rounding by largest remainder (sums to `total`).
    The proportions are scaled by their largest first: `1e308` twice sums to infinity."""
    shares = np.asarray(proportions, dtype=np.float64)
    shares = shares / shares.max()
    exact = shares / shares.sum() * total
    counts = np.floor(exact).astype(int)
    order = np.argsort(-(exact - counts), kind="stable")
    counts[order[: total - counts.sum()]] += 1
    return [int(c) for c in counts]


def allocate_seats(
    keys: Sequence[str], proportions: Sequence[float], *, episodes: int, agents: Sequence[str],
    rng: np.random.Generator,
) -> list[dict[str, str]]:  # fmt: skip
    """One `{agent: policy key}` per episode."""
    counts = seat_counts(proportions, episodes * len(agents))
    pool = np.repeat(np.asarray(keys, dtype=object), counts)
    grid = rng.permutation(pool).reshape(episodes, len(agents))
    return [dict(zip(agents, row, strict=True)) for row in grid.tolist()]


class SeatPlan:
    """Episode index -> `{agent: policy key}`, allocated by proportion `PLAN_CHUNK` episodes
    at a time (in episode order, as a rollout starts them), so any `-n` plans in bounded
    memory; up to `PLAN_CHUNK` episodes it is one `allocate_seats`."""

    def __init__(
        self, keys: Sequence[str], proportions: Sequence[float], *, episodes: int,
        agents: Sequence[str], seed: int,
    ) -> None:  # fmt: skip
        self.keys, self.proportions, self.agents = list(keys), list(proportions), list(agents)
        self.episodes = episodes
        self.rng = np.random.default_rng(seed)
        self.chunk, self.plan = -1, []

    def __call__(self, index: int) -> dict[str, str]:
        chunk = index // PLAN_CHUNK
        if chunk < self.chunk:
            raise ValueError(f"episode {index} asked after chunk {self.chunk} was planned")
        while self.chunk < chunk:
            self.chunk += 1
            size = min(PLAN_CHUNK, self.episodes - self.chunk * PLAN_CHUNK)
            self.plan = allocate_seats(
                self.keys, self.proportions, episodes=size, agents=self.agents, rng=self.rng
            )
        return self.plan[index - chunk * PLAN_CHUNK]


def _labels(shares: Sequence[PolicyShare]) -> list[str]:
    """Unique keys: the URI text, with `#2`, `#3`... for repeats."""
    seen: dict[str, int] = {}
    labels = []
    for share in shares:
        seen[share.uri.text] = seen.get(share.uri.text, 0) + 1
        count = seen[share.uri.text]
        labels.append(share.uri.text if count == 1 else f"{share.uri.text}#{count}")
    return labels


def run_policies(
    *,
    policies: Sequence[str],
    env: str | None,
    episodes: int,
    seed: int = 0,
    sample: bool = False,
    parallel: int = 8,
    max_steps: int | None = None,
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> dict[str, Any]:
    check_episodes(episodes)
    if not policies:
        raise UserError("pass at least one -p URI[,proportion=P]")
    shares = [parse_share(text) for text in policies]
    target = resolve_env(env, policies=[s.uri for s in shares])
    shape = probe_env(target)
    keys = _labels(shares)
    loaded = {
        key: policy_for(share.uri, target=target, shape=shape, agent=shape.agent_ids[0],
                        sample=sample)
        for key, share in zip(keys, shares, strict=True)
    }  # fmt: skip
    plan = SeatPlan(
        keys, [s.proportion for s in shares], episodes=episodes, agents=shape.agent_ids,
        seed=seed,
    )  # fmt: skip
    started = time.monotonic()
    tallies = {key: SeatTally(key) for key in keys}
    played = 0
    for record in Rollout(
        make_env=lambda: AgentEnv(target),
        policies=loaded,
        seats=plan,
        seed=seed,
        parallel=parallel,
        max_steps=max_steps,
        hooks=RolloutHooks(on_episode=on_episode),
    ).play(episodes):  # folded as they finish: any -n in bounded memory
        played += 1
        for tally in tallies.values():
            tally.add(record)
    rows = []
    for key, share in zip(keys, shares, strict=True):
        row = {"policy": key, "proportion": share.proportion, **tallies[key].summary()}
        if shape.two_player:
            row["vs"] = tallies[key].head_to_head()
        rows.append(row)
    return {
        "env": target.env_id,
        "episodes": played,
        "seed": seed,
        "policies": rows,
        "wall_s": round(time.monotonic() - started, 3),
    }
