"""`rlp run`: several policies share the agents of an env by proportion; results per policy.

`-p URI,proportion=3 -p URI,proportion=5` over N episodes of a two-player game fills the
2N seats with exactly round(2N * 3/8) and round(2N * 5/8) seats (largest remainder), shuffled
with the seed, so every game's two seats are drawn by proportion and mirror matches happen.
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
from rl_platform.evaluation.summary import head_to_head, summarize
from rl_platform.policies import PolicyURI, parse_policy_uri

_OPTIONS = {"proportion"}


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
    """Split `total` seats by proportion, rounding by largest remainder (sums to `total`)."""
    shares = np.asarray(proportions, dtype=np.float64)
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
    plan = allocate_seats(
        keys, [s.proportion for s in shares], episodes=episodes, agents=shape.agent_ids,
        rng=np.random.default_rng(seed),
    )  # fmt: skip
    started = time.monotonic()
    records = Rollout(
        make_env=lambda: AgentEnv(target),
        policies=loaded,
        seats=lambda index: plan[index],
        seed=seed,
        parallel=parallel,
        max_steps=max_steps,
        hooks=RolloutHooks(on_episode=on_episode),
    ).run(episodes)
    rows = []
    for key, share in zip(keys, shares, strict=True):
        row = {"policy": key, "proportion": share.proportion, **summarize(records, key)}
        if shape.two_player:
            row["vs"] = head_to_head(records, key)
        rows.append(row)
    return {
        "env": target.env_id,
        "episodes": len(records),
        "seed": seed,
        "policies": rows,
        "wall_s": round(time.monotonic() - started, 3),
    }
