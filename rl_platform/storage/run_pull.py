"""`rlp pull`: bring runs back from storage (`logging.storage`), verified file by file.

A run is found by its location (`s3://bucket/runs/NAME/STAMP`, a shared path) or, below a
storage root, by its key (`NAME/STAMP`) or by the Ray job that trained it (the `job_id` in its
`manifest.json`; a job that trained several seeds has one run per seed). Every file listed in
the manifest is downloaded into a temp folder beside the destination and checked against the
manifest's size and sha256, then every checkpoint against its own hashes
(`storage.checkpoints.verify_checkpoint`); only then is the folder renamed into place. Any
mismatch, a missing file or a missing manifest is an `IntegrityError` (exit 2) naming the file,
and leaves the destination as it was.
"""

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from loguru import logger

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.storage.checkpoints import META_FILE, verify_checkpoint
from rl_platform.storage.folder_storage import FolderStorage
from rl_platform.storage.layout import CHECKPOINTS_DIR, MANIFEST_FILE, RUNS_DIR, SPEC_FILE
from rl_platform.storage.run_lock import RunLock
from rl_platform.storage.run_manifest import (
    FileEntry,
    HashingReader,
    RunManifest,
    parse_manifest,
    path_parts,
)
from rl_platform.utils.atomic import COPY_CHUNK, atomic_directory, write_bytes_atomic
from rl_platform.utils.names import is_safe_name, safe_join
from rl_platform.utils.storage_uri import check_storage_uri, is_storage_uri


@dataclass(frozen=True)
class StoredRun:
    """A run on storage: where it is and its manifest (raw bytes kept for the copy)."""

    storage: FolderStorage
    manifest: RunManifest
    manifest_data: bytes


@dataclass(frozen=True)
class PulledRun:
    source: str
    dest: Path
    manifest: RunManifest

    @property
    def size(self) -> int:
        return sum(entry.size for entry in self.manifest.files.values())


def open_storage(uri: str, *, what: str) -> FolderStorage:
    """A storage folder from a URI or a local path; a bad one is a `UserError` naming `what`."""
    try:
        if is_storage_uri(uri):
            check_storage_uri(uri)
        return FolderStorage.from_uri(uri)
    except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise UserError(f"{what} {uri}: {exc}") from None


def read_stored_run(storage: FolderStorage) -> StoredRun:
    try:
        data = storage.read_bytes(MANIFEST_FILE)
    except (FileNotFoundError, IsADirectoryError):
        raise UserError(
            f"{storage.uri}: no {MANIFEST_FILE}, so no complete upload of a run is there (it is "
            "written after the files it lists): check the location, or wait for the run's "
            "first upload"
        ) from None
    manifest = parse_manifest(data, source=f"{storage.uri}/{MANIFEST_FILE}")
    return StoredRun(storage=storage, manifest=manifest, manifest_data=data)


def find_runs(source: str, *, storage: str | None = None) -> list[StoredRun]:
    """`source` is a run's URI or path; with `storage`, a run key (`NAME/STAMP`) or a job id."""
    if storage is None or is_storage_uri(source):
        return [read_stored_run(open_storage(source, what="run"))]
    root = open_storage(storage, what="--from")
    if "/" in source:
        return [read_stored_run(root.child(*path_parts(source)))]
    return job_runs(root, source)


def job_runs(root: FolderStorage, job_id: str) -> list[StoredRun]:
    """Every run below `root` whose manifest names `job_id` (the shallowest manifest of a
    folder tree is its run's; nothing below a run is another run)."""
    folders = [p[:-1] for p in root.walk() if p[-1] == MANIFEST_FILE and all(map(is_safe_name, p))]
    runs: list[tuple[str, ...]] = []
    found = []
    for parts in sorted(folders, key=len):
        if any(parts[: len(run)] == run for run in runs):
            continue
        try:
            stored = read_stored_run(root.child(*parts))
        except IntegrityError as exc:
            logger.warning("skipping {}: {}", "/".join(parts), exc)
            continue
        runs.append(parts)
        if stored.manifest.job_id == job_id:
            found.append(stored)
    if not found:
        raise UserError(
            f"no run of job {job_id} in {root.uri} ({len(runs)} run(s) there): the job may not "
            "have reached its first upload, or stored its runs elsewhere (logging.storage, --out)"
        )
    return found


def destinations(runs: list[StoredRun], *, to: Path | None) -> list[Path]:
    """One run: `to`, else `runs/<run key>`; several (a seeds job): `<to or runs>/<run key>`."""
    if len(runs) == 1 and to is not None:
        return [to]
    root = Path(RUNS_DIR) if to is None else to
    return [root.joinpath(*path_parts(run.manifest.run)) for run in runs]


def check_destination(dest: Path, *, force: bool, source: FolderStorage | None = None) -> None:
    """A new or empty folder, or with `force` one run folder to replace (`replaceable_run`);
    never the run being pulled, a folder around it or one inside it."""
    if dest.exists() and not dest.is_dir():
        raise UserError(f"{dest} is a file; give a folder for the run")
    if source is not None:
        _check_apart(dest, source)
    if dest.is_dir() and any(dest.iterdir()):
        if not force:
            raise UserError(f"{dest} exists and is not empty; pass --force to replace it")
        replaceable_run(dest)


def _check_apart(dest: Path, source: FolderStorage) -> None:
    """Replacing `dest` deletes it whole, and a pull writes its temp folder beside `dest`: a
    destination that is, holds or sits inside the stored run would delete or change it."""
    if not source.is_local:
        return
    stored, target = Path(source.root).resolve(), dest.resolve()
    if target == stored or stored.is_relative_to(target) or target.is_relative_to(stored):
        raise UserError(
            f"--to {dest}: the run being pulled is at {stored}; pull it to a folder that "
            "neither holds it nor is inside it"
        )


def replaceable_run(dest: Path) -> None:
    """`--force` replaces one run folder (its top holds spec.yaml or manifest.json) and nothing
    else: a storage root, a folder of several runs (a seeds parent) or any other folder with
    files in it is refused, since replacing it would delete other people's runs or files."""
    if not any((dest / name).is_file() for name in (SPEC_FILE, MANIFEST_FILE)):
        raise UserError(
            f"--to {dest}: not a run folder (no {SPEC_FILE} or {MANIFEST_FILE} at its top) and "
            "not empty; --force replaces only a run folder: give a new or empty folder"
        )
    for root, dirs, files in os.walk(dest):
        if Path(root) != dest and (SPEC_FILE in files or MANIFEST_FILE in files):
            raise UserError(
                f"--to {dest}: holds another run ({root}); --force replaces one run folder, "
                "never a folder of runs: give that run's own folder, or a new one"
            )
        dirs[:] = [d for d in dirs if not d.startswith(".")]


def pull_runs(
    source: str, *, storage: str | None = None, to: Path | None = None, force: bool = False
) -> list[PulledRun]:
    """Find the runs (`find_runs`) and download each, verified, into its destination. A run
    folder replaced with `force` is locked (`RunLock`) while it is replaced: never one that
    trains."""
    runs = find_runs(source, storage=storage)
    dests = destinations(runs, to=to)
    for run, dest in zip(runs, dests, strict=True):  # all refusals before any download
        check_destination(dest, force=force, source=run.storage)
    pulled = []
    for run, dest in zip(runs, dests, strict=True):
        replacing = dest.is_dir() and any(dest.iterdir())
        with RunLock(dest) if replacing else contextlib.nullcontext():
            pulled.append(pull_run(run, dest))
    return pulled


def pull_run(run: StoredRun, dest: Path) -> PulledRun:
    """Download one run into `dest` (replaced whole, only once everything verified)."""
    if not run.manifest.final:
        logger.warning(
            "{}: the run had not ended at its last upload (still training, or stopped before "
            "its final upload); pulling the files of that upload",
            run.storage.uri,
        )
    with atomic_directory(dest) as tmp:
        for rel, entry in run.manifest.files.items():
            _download(run.storage, rel, entry, tmp)
        write_bytes_atomic(tmp / MANIFEST_FILE, run.manifest_data)
        _verify_checkpoints(tmp, source=run.storage.uri)
    return PulledRun(source=run.storage.uri, dest=dest, manifest=run.manifest)


def _download(storage: FolderStorage, rel: str, entry: FileEntry, tmp: Path) -> None:
    parts = path_parts(rel)
    target = safe_join(tmp, *parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with storage.open_input(*parts) as stream, target.open("wb") as out:
            reader = HashingReader(stream)
            remaining = entry.size + 1  # one byte more than listed is enough to tell
            while remaining and (chunk := reader.read(min(COPY_CHUNK, remaining))):
                out.write(chunk)
                remaining -= len(chunk)
    except FileNotFoundError:
        raise IntegrityError(
            f"{storage.uri}/{rel}: listed in {MANIFEST_FILE} but missing from storage"
        ) from None
    if reader.entry() != entry:
        raise IntegrityError(
            f"{storage.uri}/{rel}: size or sha256 differs from {MANIFEST_FILE} (modified or "
            "truncated on storage, or changed by an upload still under way); nothing was pulled"
        )


def _verify_checkpoints(run_dir: Path, *, source: str) -> None:
    root = run_dir / CHECKPOINTS_DIR
    if not root.is_dir():
        return
    for folder in sorted(p for p in root.iterdir() if (p / META_FILE).is_file()):
        try:
            verify_checkpoint(folder)
        except IntegrityError as exc:
            # Name the checkpoint where the user can find it, not in the temp folder.
            where = f"{source}/{CHECKPOINTS_DIR}/{folder.name}"
            raise IntegrityError(str(exc).replace(str(folder), where)) from None
