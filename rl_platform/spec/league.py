"""The `league:` block of an experiment spec (pydantic v2, frozen, unknown keys rejected)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rl_platform.base.errors import UnsafePathError
from rl_platform.spec.base import Integer
from rl_platform.spec.mix_schedule import (
    MixInterpolation,
    MixPhase,
    check_schedule,
    mix_at,
    mix_keys,
    phases_of,
)
from rl_platform.utils.names import check_name

SELF_PLAY = "self_play"
"""The `opponent_mix` key of the live main playing itself (`league/matchmaking.py`)."""


class RolesSpec(BaseModel):
    """Extra learners besides main (AlphaStar-style exploiters)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    main_exploiters: Integer = Field(
        default=0, ge=0, description="Learners that play only the live main, to find its flaws."
    )
    league_exploiters: Integer = Field(
        default=0, ge=0, description="Learners that play PFSP against every non-learner member."
    )


class LeagueSpec(BaseModel):
    """Self-play league settings: opponent mix, matchmaking, snapshots, slots and roles."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    opponent_mix: dict[str, float] | list[MixPhase] = Field(
        default_factory=lambda: {SELF_PLAY: 1.0},
        description=(
            "Share of main's games per opponent class. 'self_play' means frozen copies chosen by "
            "`matchmaking`; any other key is a scripted agent name or a league member id. "
            "Weights are >= 0 and are normalized to sum 1. A list of phases "
            "({from_env_steps, mix}) is a schedule by env step (spec/mix_schedule.py)."
        ),
    )
    mix_interpolation: MixInterpolation = Field(
        default="step",
        description="Schedules: hold each phase (step) or blend neighbouring phases (linear).",
    )
    matchmaking: Literal["uniform", "latest", "pfsp"] = Field(
        default="pfsp",
        description="How self_play picks a frozen member: uniformly, the newest, or by PFSP.",
    )
    pfsp_weighting: Literal["hard", "variance"] = Field(
        default="hard",
        description="PFSP weight f(x) of P[main wins]=x: hard (1-x)^p or variance x(1-x).",
    )
    pfsp_p: float = Field(default=2.0, gt=0, description="Exponent p of the hard PFSP weighting.")
    mix_pfsp: float = Field(
        default=0.0,
        ge=0,
        le=1,
        description=(
            "Share of the combined weight of the mix's keys other than self_play (scripted "
            "agents, named members) that PFSP hands out by main's windowed win rate against "
            "each; the rest keeps their fixed weights, so every key stays in play. 0: fixed."
        ),
    )
    snapshot_every: Integer | None = Field(
        default=None, ge=1, description="Freeze a copy of each learner every N iterations."
    )
    snapshot_every_env_steps: Integer | None = Field(
        default=None, ge=1, description="Freeze a copy of each learner every N env steps."
    )
    snapshot_win_rate: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Also freeze a learner once its windowed win rate reaches this value.",
    )
    win_rate_window: Integer = Field(
        default=100, ge=1, description="Games in the moving windows for win rates and PFSP."
    )
    slots: Integer = Field(
        default=4,
        ge=1,
        description="Opponent modules opponent_0..K-1 frozen members rotate through.",
    )
    max_snapshots: Integer | None = Field(
        default=None, ge=1, description="Keep at most this many snapshots; the oldest are evicted."
    )
    roles: RolesSpec = Field(default_factory=RolesSpec, description="Exploiter learners.")
    scripted: list[str] | dict[str, str] = Field(
        default_factory=list,
        description=(
            "Scripted agents added to the pool as members: rl_platform's names (`[based]`), "
            "or member name -> agent (`{mybot: mypkg.bots:act}`), where an agent is one of "
            "ours or a user's `package.module:act_fn`, `act(obs, rng) -> actions[B]`."
        ),
    )

    @field_validator("opponent_mix")
    @classmethod
    def _check_mix_or_schedule(
        cls, value: dict[str, float] | list[MixPhase]
    ) -> dict[str, float] | list[MixPhase]:
        if isinstance(value, dict):
            return _check_mix(value)
        check_schedule(value)
        for index, phase in enumerate(value):
            try:
                _check_mix(phase.mix)
            except ValueError as err:
                raise ValueError(f"phase {index}: {err}") from None
        return value

    @property
    def mix_keys(self) -> list[str]:
        """Every opponent class the mix or any phase of its schedule names."""
        return mix_keys(self.opponent_mix)

    def mix_at(self, env_steps: int) -> dict[str, float]:
        """The normalized mix in effect at `env_steps`."""
        return mix_at(self.opponent_mix, env_steps, self.mix_interpolation)

    @property
    def scripted_agents(self) -> dict[str, str]:
        """Member name -> scripted agent (a registry name or `package.module:act_fn`)."""
        if isinstance(self.scripted, dict):
            return dict(self.scripted)
        return {name: name for name in self.scripted}

    @field_validator("scripted")
    @classmethod
    def _check_scripted(cls, value: list[str] | dict[str, str]) -> list[str] | dict[str, str]:
        names = list(value)
        for name in names:
            _checked(name, "scripted agent name")
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"scripted agents listed more than once: {duplicates}")
        return value

    @model_validator(mode="after")
    def _check_slots(self) -> "LeagueSpec":
        # One slot for main's self-play draws plus one per league exploiter, at least.
        self_play = any(p.mix.get(SELF_PLAY, 0) > 0 for p in phases_of(self.opponent_mix))
        needed = (1 if self_play else 0) + self.roles.league_exploiters
        if self.slots < needed:
            raise ValueError(
                f"slots={self.slots} is too few: need >= {needed} (1 for self_play plus 1 per "
                "league exploiter)"
            )
        return self


def _check_mix(mix: dict[str, float]) -> dict[str, float]:
    if not mix:
        raise ValueError("opponent_mix is empty: give at least one class, e.g. {self_play: 1}")
    negative = {k: w for k, w in mix.items() if w < 0}
    if negative:
        raise ValueError(f"opponent_mix weights must be >= 0; negative: {negative}")
    if sum(mix.values()) <= 0:
        raise ValueError(f"opponent_mix weights must sum to > 0, got {mix}")
    for key in mix:
        _checked(key, "opponent_mix key")
    return mix


def _checked(name: str, what: str) -> str:
    # check_name raises UnsafePathError; pydantic reports only ValueError nicely.
    try:
        return check_name(name, what=what)
    except UnsafePathError as err:
        raise ValueError(str(err)) from None
