"""League state beyond the member records, and the checks for restoring it.

`LeagueState` holds everything a resumed league needs to continue exactly: the matchmaking RNG
state, slot contents and the current slot plan, result windows, snapshot counters. Together
with the member records (ids, stats, ratings, weight hashes) it is the full league state.
"""

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from rl_platform.base.errors import IntegrityError, UserError

STATE_VERSION = 1


class LeagueMismatchError(UserError):
    """A saved league state names different members than the pool it is restored into."""

    def __init__(self, *, missing: Collection[str], extra: Collection[str]) -> None:
        self.missing = sorted(missing)
        self.extra = sorted(extra)
        super().__init__(
            "league state does not match the league pool: "
            f"missing from the pool (in the saved state): {self.missing}; "
            f"extra in the pool (not in the saved state): {self.extra}. "
            "Restore the state into the league folder it was saved with."
        )


def check_same_members(*, state_ids: Collection[str], pool_ids: Collection[str]) -> None:
    missing = set(state_ids) - set(pool_ids)
    extra = set(pool_ids) - set(state_ids)
    if missing or extra:
        raise LeagueMismatchError(missing=missing, extra=extra)


@dataclass
class LeagueState:
    rng: str  # Matchmaker.get_state(): the Generator state as JSON text
    slots: list[str | None]
    plan: dict[str, Any] | None = None  # SlotPlan.to_dict() of the current iteration
    results: dict[str, Any] = field(default_factory=dict)  # ResultBook.to_dict()
    snapshot_counters: dict[str, int] = field(default_factory=dict)  # learner -> last _vN
    last_snapshot_iteration: dict[str, int] = field(default_factory=dict)
    last_snapshot_env_steps: dict[str, int] = field(default_factory=dict)
    iteration: int = 0
    env_steps: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "rng": self.rng,
            "slots": list(self.slots),
            "plan": self.plan,
            "results": self.results,
            "snapshot_counters": dict(self.snapshot_counters),
            "last_snapshot_iteration": dict(self.last_snapshot_iteration),
            "last_snapshot_env_steps": dict(self.last_snapshot_env_steps),
            "iteration": self.iteration,
            "env_steps": self.env_steps,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "LeagueState":
        if data.get("version") != STATE_VERSION:
            raise UserError(
                f"unsupported league state version {data.get('version')!r} "
                f"(this build reads version {STATE_VERSION})"
            )
        return cls(
            rng=data["rng"],
            slots=list(data["slots"]),
            plan=data.get("plan"),
            results=data.get("results", {}),
            snapshot_counters=dict(data.get("snapshot_counters", {})),
            last_snapshot_iteration=dict(data.get("last_snapshot_iteration", {})),
            last_snapshot_env_steps=dict(data.get("last_snapshot_env_steps", {})),
            iteration=int(data.get("iteration", 0)),
            env_steps=int(data.get("env_steps", 0)),
        )


# The shape of a saved state, checked where `league.json`'s state is read (`League`, `rlp
# league show`; the pool keeps it opaque) by `check_saved_state`: a
# hand-edited or damaged file (a list for the state, a string for the results window) must be
# one line naming the field, not a crash in whichever reader touches it first. Unknown keys are
# ignored (they break nothing); what each reader uses has its type.
class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _PairRecord(_Record):
    wins: NonNegativeInt
    draws: NonNegativeInt
    losses: NonNegativeInt
    recent: list[Literal[-1, 0, 1]]


class _ResultsRecord(_Record):
    window: int = Field(default=100, ge=1)
    learners: dict[str, list[Literal[-1, 0, 1]]] = {}
    pairs: dict[str, dict[str, _PairRecord]] = {}


class _PlanRecord(_Record):
    slots: list[str | None]
    reload: list[int]
    opponents: dict[str, list[tuple[str, str, float]]]


class _StateRecord(_Record):
    version: Literal[1]
    rng: str
    slots: list[str | None]
    plan: _PlanRecord | None = None
    results: _ResultsRecord = _ResultsRecord()
    snapshot_counters: dict[str, NonNegativeInt] = {}
    last_snapshot_iteration: dict[str, NonNegativeInt] = {}
    last_snapshot_env_steps: dict[str, NonNegativeInt] = {}
    iteration: NonNegativeInt = 0
    env_steps: NonNegativeInt = 0


def check_saved_state(data: dict[str, Any], *, where: str) -> None:
    """An `IntegrityError` naming `where` (the manifest) and the first field of a saved state
    that is missing or has the wrong type; {} (no state saved yet) passes."""
    if not data:
        return
    try:
        _StateRecord.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "state"
        raise IntegrityError(
            f"{where}: not a valid league state (field {field!r}: {first['msg']}); it was "
            "edited or damaged"
        ) from None
