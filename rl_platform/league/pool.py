"""`LeaguePool`: the league's members and their frozen weights, persisted under one storage root.

Layout under the root (local folder or object-store prefix):

    league.json                   manifest: {"version", "members": [...], "state": {...}}
    weights/<member_id>.safetensors

Ordering rules that keep the pool consistent after a crash or a full disk:

* A frozen member's weights file is written (atomically) *before* the member is registered, and
  the manifest is written only after that; a failed write registers nothing.
* Evicted members' weights are deleted only *after* a manifest without them has been written,
  so the manifest never lists a member whose weights are gone. A crash in between leaves an
  unreferenced file, which `open` prunes.
* Loading weights checks the file's sha256 against the manifest *before* deserializing anything.
"""

import hashlib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import safetensors.torch
import torch
from loguru import logger
from pydantic import ValidationError

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.league.members import (
    DEFAULT_MU,
    DEFAULT_SIGMA,
    Member,
    MemberKind,
    weights_file_name,
)
from rl_platform.storage.folder_storage import FolderStorage

MANIFEST = "league.json"
WEIGHTS_DIR = "weights"
MANIFEST_VERSION = 1

WeightsLike = Mapping[str, torch.Tensor | np.ndarray]


def serialize_weights(weights: WeightsLike, *, member_id: str) -> bytes:
    """safetensors bytes of CPU copies of `weights`; never aliases the caller's tensors."""
    tensors: dict[str, torch.Tensor] = {}
    for name, value in weights.items():
        if isinstance(value, np.ndarray):
            value = torch.from_numpy(np.array(value, copy=True))
        if not isinstance(value, torch.Tensor):
            raise UserError(
                f"weights for league member {member_id!r}: {name!r} is a {type(value).__name__}, "
                "expected a flat dict of torch tensors or numpy arrays"
            )
        # clone() also breaks storage sharing between entries, which safetensors rejects.
        tensors[name] = value.detach().to("cpu").contiguous().clone()
    return safetensors.torch.save(tensors, metadata={"member_id": member_id})


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class LeaguePool:
    """Members (in registration order) plus their weights files. Single writer per root."""

    def __init__(self, storage: FolderStorage | str | Path, *, max_snapshots: int | None = None):
        if max_snapshots is not None and max_snapshots < 1:
            raise UserError(f"max_snapshots must be >= 1 or None, got {max_snapshots}")
        self.storage = (
            storage if isinstance(storage, FolderStorage) else FolderStorage.from_uri(storage)
        )
        self.max_snapshots = max_snapshots
        self._members: dict[str, Member] = {}
        self._pending_deletes: list[str] = []

    # ----- members ---------------------------------------------------------------------------
    @property
    def members(self) -> list[Member]:
        return list(self._members.values())

    @property
    def ids(self) -> list[str]:
        return list(self._members)

    def __contains__(self, member_id: object) -> bool:
        return member_id in self._members

    def __len__(self) -> int:
        return len(self._members)

    def get(self, member_id: str) -> Member:
        try:
            return self._members[member_id]
        except KeyError:
            raise UserError(f"no league member {member_id!r}; known: {self.ids}") from None

    def add_member(self, member: Member) -> None:
        """Register a member without weights (main, scripted, exploiters)."""
        self._check_new(member.id)
        if member.is_frozen:
            raise UserError(f"member {member.id!r} is {member.kind}: use add_frozen to store it")
        self._members[member.id] = member

    def update_member(self, member: Member) -> None:
        """Replace an existing record (stats, rating); the weights fields must not change."""
        old = self.get(member.id)
        if (old.weights_file, old.weights_sha256) != (member.weights_file, member.weights_sha256):
            raise IntegrityError(f"league member {member.id!r}: weights record may not change")
        self._members[member.id] = member

    def _check_new(self, member_id: str) -> None:
        if member_id in self._members:
            raise UserError(f"league member {member_id!r} already exists")

    # ----- frozen members and weights --------------------------------------------------------
    def add_frozen(
        self,
        *,
        member_id: str,
        weights: WeightsLike,
        kind: MemberKind = MemberKind.SNAPSHOT,
        parent_id: str | None = None,
        created_at_step: int = 0,
        mu: float = DEFAULT_MU,
        sigma: float = DEFAULT_SIGMA,
        metadata: Mapping[str, Any] | None = None,
        protected: Collection[str] = (),
    ) -> tuple[Member, list[str]]:
        """Write a deep copy of `weights`, then register the member; returns (member, evicted).

        Nothing is registered if writing fails. The manifest is not written here: call `save`.
        Evicted ids (oldest snapshots beyond `max_snapshots`, never ids in `protected`) are
        removed from memory now and their files deleted after the next `save`.
        """
        file_name = weights_file_name(member_id)  # validates the id before any write
        self._check_new(member_id)
        data = serialize_weights(weights, member_id=member_id)
        self.storage.write_bytes(WEIGHTS_DIR, file_name, data=data)
        member = Member(
            id=member_id,
            kind=kind,
            parent_id=parent_id,
            created_at_step=created_at_step,
            mu=mu,
            sigma=sigma,
            weights_file=file_name,
            weights_sha256=sha256_hex(data),
            metadata=dict(metadata or {}),
        )
        if not member.is_frozen:
            raise UserError(f"add_frozen needs a snapshot or checkpoint kind, got {kind}")
        self._members[member_id] = member
        return member, self._evict(protected={member_id, *protected})

    def _evict(self, *, protected: Collection[str]) -> list[str]:
        if self.max_snapshots is None:
            return []
        snapshots = [m.id for m in self._members.values() if m.kind == MemberKind.SNAPSHOT]
        excess = len(snapshots) - self.max_snapshots
        evicted = [mid for mid in snapshots if mid not in protected][: max(excess, 0)]
        for member_id in evicted:
            self.remove(member_id)
        if evicted:
            logger.info(
                "league: evicting oldest snapshots {} (max_snapshots={})",
                evicted,
                self.max_snapshots,
            )
        return evicted

    def remove(self, member_id: str) -> Member:
        """Unregister a member; its weights file is deleted after the next `save`."""
        member = self.get(member_id)
        del self._members[member_id]
        if member.weights_file is not None:
            self._pending_deletes.append(member.weights_file)
        return member

    def load_weights(self, member_id: str) -> dict[str, torch.Tensor]:
        """CPU tensors of a frozen member, after checking the file against the manifest hash."""
        member = self.get(member_id)
        if member.weights_file is None or member.weights_sha256 is None:
            raise UserError(f"league member {member_id!r} ({member.kind}) has no stored weights")
        try:
            data = self.storage.read_bytes(WEIGHTS_DIR, member.weights_file)
        except FileNotFoundError:
            raise IntegrityError(
                f"weights of league member {member_id!r} are missing from {self.storage.uri}"
            ) from None
        actual = sha256_hex(data)
        if actual != member.weights_sha256:
            raise IntegrityError(
                f"weights of league member {member_id!r} ({WEIGHTS_DIR}/{member.weights_file} "
                f"in {self.storage.uri}) do not match the manifest: sha256 {actual} != "
                f"{member.weights_sha256}; the file was modified or truncated"
            )
        return safetensors.torch.load(data)

    # ----- manifest --------------------------------------------------------------------------
    def save(self, state: Mapping[str, Any] | None = None) -> None:
        """Atomically write `league.json` (members + opaque `state`), then drop evicted files."""
        manifest = {
            "version": MANIFEST_VERSION,
            "members": [m.model_dump(mode="json") for m in self._members.values()],
            "state": dict(state or {}),
        }
        self.storage.write_json(MANIFEST, obj=manifest)
        referenced = {m.weights_file for m in self._members.values()}
        for file_name in self._pending_deletes:
            if file_name not in referenced:
                self.storage.delete(WEIGHTS_DIR, file_name)
        self._pending_deletes.clear()

    def manifest_exists(self) -> bool:
        return self.storage.exists(MANIFEST)

    @classmethod
    def open(
        cls,
        storage: FolderStorage | str | Path,
        *,
        max_snapshots: int | None = None,
        prune: bool = False,
    ) -> tuple["LeaguePool", dict[str, Any]]:
        """Load the pool and its saved `state` ({} and an empty pool if there is no manifest).

        `prune=True` (the writer only) deletes unreferenced weights files. A read-only viewer
        must not prune: it could delete a snapshot the writer has stored but not yet registered.
        """
        pool = cls(storage, max_snapshots=max_snapshots)
        if not pool.manifest_exists():
            return pool, {}
        kind = pool.storage.kind(MANIFEST)
        if kind != "file":  # read as it is, a folder would be an OS error far from its cause
            what = "a folder" if kind == "folder" else "not a regular file"
            raise UserError(
                f"{pool.storage.uri}/{MANIFEST} is {what}; a league's manifest is the JSON file "
                "`rlp train` writes: put back the file from a copy of the run"
            )
        manifest = pool.storage.read_json(MANIFEST)
        version = manifest.get("version") if isinstance(manifest, dict) else None
        if version != MANIFEST_VERSION:
            raise UserError(
                f"{pool.storage.uri}/{MANIFEST}: unsupported league manifest version {version!r} "
                f"(this build reads version {MANIFEST_VERSION})"
            )
        members, state = _parse_manifest(manifest, where=f"{pool.storage.uri}/{MANIFEST}")
        for member in members:
            pool._check_new(member.id)
            pool._members[member.id] = member
        if prune:
            pool.prune_orphan_weights()
        return pool, state

    def prune_orphan_weights(self) -> list[str]:
        """Delete weights files no member references (left by a crash before a manifest save)."""
        referenced = {m.weights_file for m in self._members.values()}
        orphans = [n for n in self.storage.list(WEIGHTS_DIR) if n not in referenced]
        for name in orphans:
            self.storage.delete(WEIGHTS_DIR, name)
        if orphans:
            logger.warning("league: removed unreferenced weights files {}", orphans)
        return orphans


def _parse_manifest(manifest: dict[str, Any], *, where: str) -> tuple[list[Member], dict[str, Any]]:
    """Members and state of a version-1 manifest; a hand-edited or damaged one is an
    `IntegrityError` naming the first bad field."""
    try:
        records = manifest["members"]
        state = manifest.get("state", {})
        if not isinstance(records, list) or not isinstance(state, dict):
            raise TypeError("`members` must be a list and `state` an object")
        return [Member.model_validate(record) for record in records], state
    except KeyError as exc:
        problem = f"missing {exc}"
    except TypeError as exc:
        problem = str(exc)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        problem = f"member field {field!r}: {first['msg']}"
    raise IntegrityError(
        f"{where}: not a valid league manifest ({problem}); it was edited or damaged"
    )
