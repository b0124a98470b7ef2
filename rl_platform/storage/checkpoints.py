"""Atomic checkpoints with a `latest` pointer and keep-last-K retention.

Each checkpoint is a folder `iter_NNNNNN/` built in a temp folder and renamed into place, holding
one safetensors + JSON pair per state part (`algorithm`, `league`, ...) and `rlp_state.json`
(counters and the sha256 of every other file in the folder). `latest` is a one-line file replaced
atomically after the folder is complete, so a SIGKILL or a full disk mid-save leaves the previous
checkpoint `latest`; it names a folder beside it, never a path elsewhere.

Loading verifies every recorded hash before decoding anything: an edited part JSON (swapped
tensor references) is refused like an edited tensor file, and `rlp_state.json` carries the
sha256 of its own other fields (`META_DIGEST_KEY`), so an edited counter is refused too. The
record cannot be switched off by editing it: a checkpoint whose `rlp_state.json` lacks its
hashes, or whose files are not all recorded, is refused. This catches corruption and edits by
hand; it is not a signature (whoever can rewrite a folder can recompute hashes: trust run
folders as you trust code, docs/reliability.md). Any failure to read a checkpoint is an
`IntegrityError` (exit 2); `latest_intact` falls back to the newest checkpoint that verifies.
"""

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.storage.layout import BEST_FILE, CHECKPOINTS_DIR, LATEST_FILE, PINS_FILE
from rl_platform.utils.atomic import (
    atomic_directory,
    remove_directory,
    write_json_atomic,
    write_text_atomic,
)
from rl_platform.utils.state_codec import (
    STATE_FORMAT,
    check_format,
    load_state_tree,
    save_state_tree,
    sha256_bytes,
)

META_FILE = "rlp_state.json"
FILES_KEY = "files"
PARTS_KEY = "sha256"
META_DIGEST_KEY = "meta_sha256"
FORMAT_KEY = "format"
"""The checkpoint's format (`STATE_FORMAT`); checkpoints written before it was recorded lack
it and are read as that format."""
_NAME = re.compile(r"^iter_(\d{6,})$")


class CheckpointWriteError(UserError, OSError):
    """A checkpoint could not be written (full disk, quota); the previous one stays `latest`."""


@dataclass(frozen=True)
class LoadedCheckpoint:
    path: Path
    meta: dict[str, Any]
    parts: dict[str, Any]


def checkpoint_name(iteration: int) -> str:
    return f"iter_{iteration:06d}"


class CheckpointStore:
    """Checkpoints of one run under `<run_dir>/checkpoints/`."""

    def __init__(self, root: str | Path, *, keep_last: int = 3) -> None:
        self.root = Path(root)
        self.keep_last = keep_last

    def save(self, *, iteration: int, parts: dict[str, Any], meta: dict[str, Any]) -> Path:
        final = self.root / checkpoint_name(iteration)
        previous = self.latest()
        try:
            with atomic_directory(final) as tmp:
                hashes = {
                    stem: save_state_tree(tree, tmp, stem=stem) for stem, tree in parts.items()
                }
                files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
                meta = {
                    **meta,
                    FORMAT_KEY: STATE_FORMAT,
                    "iteration": iteration,
                    PARTS_KEY: hashes,
                    FILES_KEY: files,
                }
                write_json_atomic(tmp / META_FILE, {**meta, META_DIGEST_KEY: meta_digest(meta)})
            write_text_atomic(self.root / LATEST_FILE, final.name + "\n")
        except OSError as exc:  # disk full, quota, permissions: say what is still safe
            kept = previous.name if previous is not None else "none"
            raise CheckpointWriteError(
                exc.errno,
                f"could not write checkpoint {final.name} in {self.root}: "
                f"{exc.strerror or exc}. The previous checkpoint ({kept}) is still `latest`; "
                "free space and continue with `rlp train SPEC --resume RUN_DIR`",
            ) from exc
        self._prune(keep=final.name)
        return final

    def complete_checkpoints(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        found = [
            p for p in self.root.iterdir() if _NAME.match(p.name) and (p / META_FILE).is_file()
        ]
        return sorted(found, key=lambda p: int(_NAME.match(p.name).group(1)))  # type: ignore[union-attr]

    def latest(self) -> Path | None:
        pointer = self.root / LATEST_FILE
        if pointer.is_file():
            # A pointer that is not text (damaged, or planted) is as stale as a wrong name.
            with pointer.open("rb") as handle:  # a name is a line: never read a large file
                name = handle.read(64).decode("ascii", errors="replace").strip()
            candidate = self.named(name)
            if candidate is not None:
                return candidate
            logger.warning("checkpoint pointer {} is stale; using the newest complete one", pointer)
        complete = self.complete_checkpoints()
        return complete[-1] if complete else None

    def named(self, name: str) -> Path | None:
        """The complete checkpoint `name` if it is a folder beside the pointers: a pointer to
        `../other_run/iter_000009` or a symlink out of the run must not redirect a resume,
        an export or an evaluation."""
        candidate = self.root / name
        if (
            _NAME.fullmatch(name)
            and (candidate / META_FILE).is_file()
            and candidate.resolve().parent == self.root.resolve()
        ):
            return candidate
        return None

    def mark_best(self, checkpoint: Path, *, metric: str, value: float) -> None:
        """Record `checkpoint` as the best evaluated one; retention never deletes it."""
        record = {"checkpoint": checkpoint.name, "metric": metric, "value": value}
        write_json_atomic(self.root / BEST_FILE, record)

    def best_record(self) -> dict[str, Any] | None:
        """`best.json` if it names a complete checkpoint beside it (like `latest`), else None."""
        try:
            record = json.loads((self.root / BEST_FILE).read_text())
            name = str(record["checkpoint"])
            value = float(record["value"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if self.named(name) is None:
            return None
        return {"checkpoint": name, "metric": str(record.get("metric", "")), "value": value}

    def best(self) -> Path | None:
        record = self.best_record()
        return None if record is None else self.root / record["checkpoint"]

    def pin(self, checkpoint: Path, *, reason: str) -> None:
        """Keep `checkpoint` whatever retention says (e.g. the teacher a BC phase took from it)."""
        pins = self.pins() | {checkpoint.name: reason}
        write_json_atomic(self.root / PINS_FILE, pins)

    def pins(self) -> dict[str, str]:
        """`pins.json`: checkpoint name -> why it is kept; {} when absent or unreadable."""
        try:
            record = json.loads((self.root / PINS_FILE).read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in record.items()} if isinstance(record, dict) else {}

    def latest_intact(self) -> "LoadedCheckpoint | None":
        """The newest checkpoint that verifies, trying `latest` first; None if there is none.
        Checkpoints that fail verification are skipped with a warning naming the reason."""
        newest = self.latest()
        candidates = [newest] if newest is not None else []
        candidates += [p for p in reversed(self.complete_checkpoints()) if p != newest]
        for path in candidates:
            try:
                return load_checkpoint(path)
            except IntegrityError as exc:
                logger.warning("skipping checkpoint {}: {}", path.name, exc)
        return None

    def _prune(self, *, keep: str) -> None:
        for stale in self.root.glob(".iter_*.tmp"):  # leftovers of a killed save
            shutil.rmtree(stale, ignore_errors=True)
        for stale in self.root.glob(f".{LATEST_FILE}.*.tmp"):  # a killed pointer write
            stale.unlink(missing_ok=True)
        complete = self.complete_checkpoints()
        best = self.best()
        kept = {keep, *self.pins()} | ({best.name} if best is not None else set())
        for old in complete[: max(0, len(complete) - self.keep_last)]:
            if old.name not in kept:
                remove_directory(old)


def sha256_file(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def meta_digest(meta: dict[str, Any]) -> str:
    """The sha256 of `rlp_state.json`'s fields other than the digest itself, canonically."""
    fields = {k: v for k, v in meta.items() if k != META_DIGEST_KEY}
    return sha256_bytes(json.dumps(fields, sort_keys=True, separators=(",", ":")).encode())


def _record_problem(path: Path, meta: Any) -> str | None:
    """Why `meta` is not a complete integrity record of the folder `path`, or None."""
    if not isinstance(meta, dict):
        return f"{META_FILE} is not an object"
    absent = [k for k in (PARTS_KEY, FILES_KEY, META_DIGEST_KEY) if k not in meta]
    if absent:
        return f"{META_FILE} lacks its integrity record ({', '.join(absent)})"
    parts, files = meta[PARTS_KEY], meta[FILES_KEY]
    if not (isinstance(parts, dict) and parts and isinstance(files, dict)):
        return f"{META_FILE}'s {PARTS_KEY} / {FILES_KEY} are not the recorded hashes"
    if meta[META_DIGEST_KEY] != meta_digest(meta):
        return f"{META_FILE} was edited after it was written (its own sha256 does not match)"
    needed = {f"{stem}{suffix}" for stem in parts for suffix in (".json", ".safetensors")}
    present = {p.name for p in path.iterdir() if p.name != META_FILE}
    unrecorded = sorted((needed | present) - set(files))
    if unrecorded:
        return f"{', '.join(unrecorded)} not recorded in {META_FILE}"
    return None


def _verify_files(path: Path, recorded: dict[str, str]) -> None:
    missing = [n for n in recorded if Path(n).name != n or not (path / n).is_file()]
    if missing:
        raise IntegrityError(f"{path}: {', '.join(missing)} missing; the checkpoint is incomplete")
    changed = [n for n, digest in recorded.items() if sha256_file(path / n) != digest]
    if changed:
        raise IntegrityError(
            f"{path}: the sha256 of {', '.join(changed)} does not match the recorded one in "
            f"{META_FILE}; modified or truncated — refusing to load this checkpoint"
        )


def verify_checkpoint(path: str | Path) -> dict[str, Any]:
    """Check the integrity record and every file hash it holds, decoding nothing; return the
    meta. Every checkpoint rl_platform writes has the record; one without it is refused."""
    path = Path(path)
    try:
        meta = json.loads((path / META_FILE).read_text())
        if isinstance(meta, dict) and FORMAT_KEY in meta:  # before its layout is relied on
            check_format(meta[FORMAT_KEY], where=str(path / META_FILE))
        problem = _record_problem(path, meta)
        if problem is not None:
            raise IntegrityError(
                f"{path}: {problem}; refusing to load a checkpoint whose integrity cannot be "
                "checked (restore the folder from its source, or resume from an earlier one)"
            )
        _verify_files(path, meta[FILES_KEY])
    except IntegrityError:
        raise
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise _unreadable(path, exc) from None
    return meta


def load_checkpoint(path: str | Path) -> LoadedCheckpoint:
    """Load every part of one checkpoint folder, verifying every recorded hash first."""
    path = Path(path)
    meta = verify_checkpoint(path)
    try:
        parts_sha = meta[PARTS_KEY]
        parts = {
            stem: load_state_tree(path, stem=stem, expected_sha256=digest)
            for stem, digest in parts_sha.items()
        }
    except IntegrityError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _unreadable(path, exc) from None
    return LoadedCheckpoint(path=path, meta=meta, parts=parts)


def _unreadable(path: Path, exc: Exception) -> IntegrityError:
    return IntegrityError(
        f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc}"[:300] + ")"
    )


def resolve_checkpoint(path: str | Path) -> Path:
    """Accept a checkpoint folder, a run folder or a `checkpoints/` folder; return the folder."""
    path = Path(path)
    if (path / META_FILE).is_file():
        return path
    for root in (path / CHECKPOINTS_DIR, path):
        latest = CheckpointStore(root).latest()
        if latest is not None:
            return latest
    raise UserError(
        f"{path}: no complete checkpoint found (expected {META_FILE} or checkpoints/latest)"
    )
