"""Game settings shared by the vectorized core, the PettingZoo env and the RLlib adapter.

Every front end takes the same keyword arguments (`max_steps`, `stocks`, `reward_weights`,
`seed`, `spawn_jitter`, `draw_is_loss`, `truncate_on_timeout`, `zone_closes_at`); unknown keys
fail loudly so a typo in a spec is not silently ignored.
"""

import difflib
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any

from rl_platform.base.errors import UserError
from rl_platform.envs.duel.rules import DEFAULT_MAX_STEPS, DEFAULT_STOCKS

REWARD_COMPONENTS: tuple[str, ...] = (
    "damage_dealt",
    "damage_taken",
    "knockout",
    "win_loss",
    "time_penalty",
)

# Win/loss dominates (5 vs at most ~3 from knockouts and ~1.5 from damage per game) while
# damage and knockouts still give a dense learning signal.
DEFAULT_REWARD_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "damage_dealt": 0.5,
        "damage_taken": 0.5,
        "knockout": 1.0,
        "win_loss": 5.0,
        "time_penalty": 0.001,
    }
)


def _default_weights() -> dict[str, float]:
    return dict(DEFAULT_REWARD_WEIGHTS)


@dataclass(frozen=True)
class DuelConfig:
    """Validated game settings."""

    max_steps: int = DEFAULT_MAX_STEPS
    """Frames until the game ends on time (20 frames per second); the result is then decided
    by stocks, then HP."""
    stocks: int = DEFAULT_STOCKS
    reward_weights: dict[str, float] = field(default_factory=_default_weights)
    """Weights of the reward components; missing names keep their default."""
    seed: int | None = None
    spawn_jitter: float = 0.5
    """Spawn x positions get uniform noise in [-jitter, jitter] so games differ."""
    draw_is_loss: bool = True
    """A game that ends level (time-out at equal stocks and HP) is a loss for both players in
    `win_loss`. Without it two trained equals learn to keep their distance and every game
    between them times out as a draw (docs/league.md, "The reference mix"); with it waiting
    for the clock is never the safe choice. The recorded result (`winner`) stays a draw."""
    zone_closes_at: float = 1.0
    """Fraction of `max_steps` after which the side blast lines close in, linearly from
    +-13 to +-0.6 at the time limit (`rules.ZONE_END_X`): players who keep their distance
    are pushed into reach of each other, so games between equals end by knockouts instead of
    on the clock (docs/duel.md, "The closing zone"). 1.0 keeps the lines fixed (the game
    before the zone)."""
    truncate_on_timeout: bool = False
    """Report the time limit as `truncated` instead of `terminated`. Off by default: the
    time left is observed and the time-out decides the winner, so it is a true end of the
    game and value bootstrapping past it would be wrong."""

    def __post_init__(self) -> None:
        problems = []
        if type(self.max_steps) is not int or self.max_steps < 1:
            problems.append(f"max_steps must be a positive int, got {self.max_steps!r}")
        if type(self.stocks) is not int or not 1 <= self.stocks <= 99:
            problems.append(f"stocks must be an int in [1, 99], got {self.stocks!r}")
        jitter = self.spawn_jitter
        if not isinstance(jitter, int | float) or isinstance(jitter, bool) or not 0 <= jitter <= 2:
            problems.append(f"spawn_jitter must be in [0, 2], got {self.spawn_jitter!r}")
        if self.seed is not None and (type(self.seed) is not int or self.seed < 0):
            problems.append(f"seed must be a non-negative int or None, got {self.seed!r}")
        closes = self.zone_closes_at
        if not isinstance(closes, int | float) or isinstance(closes, bool) or not 0 <= closes <= 1:
            problems.append(f"zone_closes_at must be in [0, 1], got {self.zone_closes_at!r}")
        if not isinstance(self.draw_is_loss, bool):
            problems.append(f"draw_is_loss must be a bool, got {self.draw_is_loss!r}")
        if not isinstance(self.truncate_on_timeout, bool):
            problems.append(f"truncate_on_timeout must be a bool, got {self.truncate_on_timeout!r}")
        if problems:
            raise UserError("duel env config: " + "; ".join(problems))

    def weight(self, name: str) -> float:
        return float(self.reward_weights[name])


def _merge_weights(weights: Mapping[str, Any] | None) -> dict[str, float]:
    merged = _default_weights()
    for name, value in (weights or {}).items():
        if name not in merged:
            hint = difflib.get_close_matches(str(name), REWARD_COMPONENTS, n=1)
            did_you_mean = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise UserError(
                f"duel env config: unknown reward weight {name!r}{did_you_mean}; "
                f"known: {', '.join(REWARD_COMPONENTS)}"
            )
        merged[name] = float(value)
    return merged


def make_config(**kwargs: Any) -> DuelConfig:
    """Build a `DuelConfig` from env kwargs, rejecting unknown keys with a close-match hint."""
    known = {f.name for f in fields(DuelConfig)}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        hints = [difflib.get_close_matches(key, sorted(known), n=1) for key in unknown]
        described = [
            f"{key!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            for key, hint in zip(unknown, hints, strict=True)
        ]
        raise UserError(
            f"duel env config: unknown option(s) {', '.join(described)}; "
            f"known: {', '.join(sorted(known))}"
        )
    for key in ("max_steps", "stocks", "seed"):
        # numpy integers (e.g. from a sampled search space) are fine; bools are not ints here.
        value = kwargs.get(key)
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            kwargs[key] = int(value)
    kwargs["reward_weights"] = _merge_weights(kwargs.get("reward_weights"))
    return DuelConfig(**kwargs)
