"""The league member record: who a member is, where its frozen weights live, how it has done.

A member id becomes a file name (`weights/<id>.safetensors`) and a module-id suffix, so it is
validated with `check_name` when the record is built, including when a manifest is read back:
a tampered `league.json` cannot smuggle `../x` into a path.
"""

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.utils.names import check_name

# openskill's defaults (mu=25, sigma=25/3); kept here so a fresh member needs no openskill import.
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0
WEIGHTS_SUFFIX = ".safetensors"


class MemberKind(StrEnum):
    MAIN = MAIN_MODULE_ID
    SNAPSHOT = "snapshot"
    SCRIPTED = "scripted"
    CHECKPOINT = "checkpoint"
    MAIN_EXPLOITER = "main_exploiter"
    LEAGUE_EXPLOITER = "league_exploiter"


# Members trained live by RLlib; their current weights sit in the learner, not in the pool.
LEARNER_KINDS = frozenset({MemberKind.MAIN, MemberKind.MAIN_EXPLOITER, MemberKind.LEAGUE_EXPLOITER})
# Members whose policy is a weights file in the pool and must be loaded into an opponent slot.
FROZEN_KINDS = frozenset({MemberKind.SNAPSHOT, MemberKind.CHECKPOINT})


class Member(BaseModel):
    """One league member. Immutable: updates go through `model_copy(update=...)`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Unique member id; safe as a file name and module-id suffix.")
    kind: MemberKind = Field(description="Role of the member in the league.")
    parent_id: str | None = Field(
        default=None, description="Member this one was frozen from (snapshots), else None."
    )
    created_at_step: int = Field(
        default=0, ge=0, description="Environment steps of the parent when the member was made."
    )
    games: int = Field(default=0, ge=0, description="Games finished by this member.")
    wins: int = Field(default=0, ge=0, description="Games won, from this member's side.")
    draws: int = Field(default=0, ge=0, description="Games drawn.")
    losses: int = Field(default=0, ge=0, description="Games lost, from this member's side.")
    mu: float = Field(default=DEFAULT_MU, description="openskill rating mean.")
    sigma: float = Field(default=DEFAULT_SIGMA, gt=0, description="openskill rating uncertainty.")
    weights_file: str | None = Field(
        default=None, description="File name under `weights/` for frozen members, else None."
    )
    weights_sha256: str | None = Field(
        default=None, description="sha256 (hex) of the weights file, checked before loading."
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form extras, e.g. {'agent': 'based'} if scripted."
    )

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        return check_name(value, what="league member id")

    @field_validator("parent_id")
    @classmethod
    def _check_parent(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value, what="league parent id")

    @field_validator("weights_file")
    @classmethod
    def _check_file(cls, value: str | None) -> str | None:
        return None if value is None else check_name(value, what="league weights file")

    @property
    def is_learner(self) -> bool:
        return self.kind in LEARNER_KINDS

    @property
    def is_frozen(self) -> bool:
        return self.kind in FROZEN_KINDS

    @property
    def ordinal(self) -> float:
        """Conservative skill estimate mu - 3 sigma, used for ranking."""
        return self.mu - 3.0 * self.sigma


def weights_file_name(member_id: str) -> str:
    return check_name(member_id, what="league member id") + WEIGHTS_SUFFIX
