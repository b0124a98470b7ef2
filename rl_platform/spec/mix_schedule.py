"""Opponent-mix schedules: `league.opponent_mix` as phases by env step (pure).

```yaml
league:
  opponent_mix:                      # start easy, end at the reference mix
    - {from_env_steps: 0, mix: {based: 0.8, self_play: 0.2}}
    - {from_env_steps: 2000000, mix: {self_play: 0.8, based: 0.15, constant: 0.05}}
  mix_interpolation: linear          # or step (default)
```

`step` holds each phase's mix until the next phase starts; `linear` blends two neighbouring
phases' (normalized) mixes by env step, and holds the last phase after it starts. The mix is a
function of the env steps alone, so a resumed run gets exactly the mix it left with.
"""

from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from rl_platform.spec.base import Integer

MixInterpolation = Literal["step", "linear"]


class MixPhase(BaseModel):
    """One phase of an opponent-mix schedule."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    from_env_steps: Integer = Field(ge=0, description="Env step at which this phase starts.")
    mix: dict[str, float] = Field(description="Opponent classes and weights, as a plain mix.")


def phases_of(opponent_mix: Mapping[str, float] | Sequence[MixPhase]) -> list[MixPhase]:
    """A plain mix is a one-phase schedule."""
    if isinstance(opponent_mix, Mapping):
        return [MixPhase(from_env_steps=0, mix=dict(opponent_mix))]
    return list(opponent_mix)


def mix_keys(opponent_mix: Mapping[str, float] | Sequence[MixPhase]) -> list[str]:
    """Every opponent class any phase names, in first-seen order."""
    keys: dict[str, None] = {}
    for phase in phases_of(opponent_mix):
        keys.update(dict.fromkeys(phase.mix))
    return list(keys)


def _normalized(mix: Mapping[str, float]) -> dict[str, float]:
    total = float(sum(mix.values()))
    return {key: weight / total for key, weight in mix.items()}


def mix_at(
    opponent_mix: Mapping[str, float] | Sequence[MixPhase],
    env_steps: int,
    interpolation: MixInterpolation = "step",
) -> dict[str, float]:
    """The normalized mix in effect at `env_steps` (zero-weight classes kept, as 0)."""
    phases = phases_of(opponent_mix)
    current = max(i for i, p in enumerate(phases) if p.from_env_steps <= env_steps)
    mix = _normalized(phases[current].mix)
    if interpolation == "step" or current + 1 == len(phases):
        return mix
    start, end = phases[current], phases[current + 1]
    alpha = (env_steps - start.from_env_steps) / (end.from_env_steps - start.from_env_steps)
    target = _normalized(end.mix)
    keys = [*mix, *(k for k in target if k not in mix)]
    return {k: (1 - alpha) * mix.get(k, 0.0) + alpha * target.get(k, 0.0) for k in keys}


def check_schedule(phases: Sequence[MixPhase]) -> None:
    """Raise `ValueError` (shown as a spec problem) for an unusable schedule."""
    if not phases:
        raise ValueError("the opponent_mix schedule is empty: give at least one phase")
    if phases[0].from_env_steps != 0:
        raise ValueError(
            f"the first opponent_mix phase starts at {phases[0].from_env_steps}; it must start "
            "at from_env_steps: 0 (the mix before it would be undefined)"
        )
    starts = [p.from_env_steps for p in phases]
    if any(b <= a for a, b in pairwise(starts)):
        raise ValueError(f"opponent_mix phases must start at increasing env steps, got {starts}")
