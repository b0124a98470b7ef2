"""Mirror a run folder to `logging.storage`: `<storage>/<run key>/`, through `pyarrow.fs`.

The run keeps writing its local folder (metrics appends, TensorBoard, W&B and logs need a local
path); the uploader copies it: the top-level files at the start, those plus `checkpoints/` and
`league/` after every checkpoint, and everything (minus hidden files, symlinks and caches) at the
end. Each file goes through `FolderStorage.upload` (a temp key, then a move), deeper folders
first so that pointers and indexes (`checkpoints/latest`, `best.json`, `league/league.json`)
arrive after what they name; `manifest.json` is written last, then files that left the run
folder (pruned checkpoints) are deleted. A file is hashed while it is sent, so its manifest
entry matches the stored bytes even if the file grew meanwhile; unchanged files are skipped.

The same manifest is kept in the local run folder: a resumed (or pulled) run reads its run key
from it and goes on uploading to the same place.

Uploads are synchronous: a slow store lengthens the checkpoint step, never races the pruning of
old checkpoints. A failed upload is a logged warning, never a failed run; the next one retries.
A store that does not answer fails a call within `RLP_NETWORK_TIMEOUT_S` (30 s,
`storage.bounded_filesystem`), so one upload waits that long at most before it gives up; after
such a timeout the uploads after checkpoints are skipped (said once, in that warning) and only
the final upload tries again, so an unreachable store costs the run two bounds, not one per
checkpoint.
"""

import os
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath

from loguru import logger

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.spec import ExperimentSpec
from rl_platform.storage.folder_storage import FolderStorage
from rl_platform.storage.layout import CHECKPOINTS_DIR, LEAGUE_DIR, MANIFEST_FILE, RUNS_DIR
from rl_platform.storage.run_manifest import (
    FileEntry,
    HashingReader,
    RunManifest,
    current_job_id,
    manifest_bytes,
    parse_manifest,
    path_parts,
)
from rl_platform.utils.atomic import COPY_CHUNK, Readable, write_bytes_atomic
from rl_platform.utils.names import is_safe_name
from rl_platform.utils.network_timeout import NetworkTimeoutError
from rl_platform.utils.storage_uri import check_storage_uri, is_storage_uri, join_storage_uri

CACHE_DIRS = frozenset({"__pycache__", "cache"})
"""Folders never uploaded: caches that whatever wrote them rebuilds."""
CHECKPOINT_TREES = (CHECKPOINTS_DIR, LEAGUE_DIR)
"""Folders uploaded after every checkpoint, besides the run folder's top-level files."""


class RunUploader:
    """See the module docstring. One per training process and run folder."""

    def __init__(
        self, run_dir: Path, *, storage: str, run_key: str, name: str, job_id: str | None
    ) -> None:
        self.run_dir = Path(run_dir)
        self.uri = join_storage_uri(storage, run_key)
        """Where the run is stored, as `rlp pull` takes it."""
        self._storage_uri, self._run_key = storage, run_key
        self._name, self._job_id = name, job_id
        self._storage: FolderStorage | None = None  # opened at the first upload (may fail)
        self._stored: dict[str, FileEntry] = {}
        self._sent_stat: dict[str, tuple[int, int]] = {}  # size, mtime_ns when last uploaded
        self._refused: set[Path] = set()
        self.stored = False
        """Whether the last upload, the final one once the run ended, reached storage: only
        then is the run stored at `uri` (`rlp train`'s closing lines say which)."""
        self.unanswered = False
        """Storage did not answer within the bound once: checkpoints are no longer uploaded
        (each would wait the bound again: 2 iterations took 130 s), only the final upload."""

    def at_start(self) -> None:
        self._sync(dict(self._files(recursive=False)), final=False)

    def after_checkpoint(self) -> None:
        if self.unanswered:
            return
        files = dict(self._files(recursive=False))
        for tree in CHECKPOINT_TREES:
            files |= dict(self._files(tree))
        self._sync(files, final=False)

    def at_end(self) -> None:
        self._sync(dict(self._files()), final=True)

    def _sync(self, files: dict[str, Path], *, final: bool) -> None:
        try:
            sent = self._upload(files, final=final)
            self.stored = True
        except Exception as exc:
            self.stored = False
            # A storage outage (network, credentials, quota: OSError or pyarrow's errors) must
            # never end a training run. The next upload retries what this one missed, unless
            # storage did not answer at all: then only the final upload tries again.
            self.unanswered = self.unanswered or isinstance(exc, NetworkTimeoutError)
            logger.warning(
                "upload to {} failed ({}: {}); training goes on, {}",
                self.uri,
                type(exc).__name__,
                str(exc).strip().splitlines()[0][:300] if str(exc).strip() else "",
                _what_next(final=final, unanswered=self.unanswered),
            )
            return
        # One console line per run (the final upload), not one per checkpoint.
        level = "INFO" if final else "DEBUG"
        logger.log(
            level, "uploaded {} file(s) to {}{}", sent, self.uri, " (final)" if final else ""
        )

    def _open(self) -> FolderStorage:
        if self._storage is None:
            storage = FolderStorage.from_uri(self._storage_uri).child(*path_parts(self._run_key))
            self._stored = _stored_files(storage)
            self._storage = storage
        return self._storage

    def _upload(self, files: dict[str, Path], *, final: bool) -> int:
        storage = self._open()
        sent = 0
        # Deeper first: a folder's files before the pointers and indexes beside it.
        for rel in sorted(files, key=lambda r: (-r.count("/"), r)):
            sent += self._upload_file(storage, rel, files[rel])
        gone = [rel for rel in self._stored if not (self.run_dir / rel).is_file()]
        for rel in gone:
            del self._stored[rel]
        manifest = RunManifest(
            run=self._run_key,
            name=self._name,
            job_id=self._job_id,
            final=final,
            updated_at=time.time(),
            files=dict(sorted(self._stored.items())),
        )
        data = manifest_bytes(manifest)
        storage.write_bytes(MANIFEST_FILE, data=data)
        write_bytes_atomic(self.run_dir / MANIFEST_FILE, data)
        _delete(storage, gone, kept=self._stored)
        return sent

    def _upload_file(self, storage: FolderStorage, rel: str, path: Path) -> bool:
        """Send one file unless storage already has it; whether it was sent."""
        try:
            handle = path.open("rb")
        except FileNotFoundError:  # removed since it was listed (a rotated log)
            return False
        with handle:
            stat = os.fstat(handle.fileno())
            if self._sent_stat.get(rel) == (stat.st_size, stat.st_mtime_ns):
                return False
            if rel not in self._sent_stat and _same_content(handle, self._stored.get(rel)):
                self._sent_stat[rel] = (stat.st_size, stat.st_mtime_ns)
                return False
            handle.seek(0)
            reader = HashingReader(handle)
            storage.upload(reader, *path_parts(rel))
        self._stored[rel] = reader.entry()
        self._sent_stat[rel] = (stat.st_size, stat.st_mtime_ns)
        return True

    def _files(self, under: str = "", *, recursive: bool = True) -> Iterator[tuple[str, Path]]:
        """(relative path, path) of the files to upload below `under`."""
        root = self.run_dir / under if under else self.run_dir
        for folder, dirs, names in os.walk(root):  # symlinked folders are not entered
            keep = [d for d in dirs if recursive and d not in CACHE_DIRS]
            dirs[:] = sorted(d for d in keep if self._uploadable(Path(folder) / d))
            for name in sorted(names):
                path = Path(folder) / name
                rel = path.relative_to(self.run_dir).as_posix()
                if rel != MANIFEST_FILE and self._uploadable(path):
                    yield rel, path

    def _uploadable(self, path: Path) -> bool:
        """Not a symlink or a hidden file (temp files, the run lock); a name that cannot be a
        storage key is skipped with a warning (once)."""
        if path.is_symlink() or path.name.startswith("."):
            return False
        if not is_safe_name(path.name):
            if path not in self._refused:
                logger.warning("not uploading {}: its name is not a portable storage key", path)
                self._refused.add(path)
            return False
        return True


def _what_next(*, final: bool, unanswered: bool) -> str:
    if final:
        return "the run is only in its run folder"
    if unanswered:
        return "without uploads after checkpoints: one final upload is tried when the run ends"
    return "the next upload retries"


def _delete(storage: FolderStorage, gone: list[str], *, kept: Iterable[str]) -> None:
    """Delete `gone` files, then the folders they leave empty (a pruned checkpoint's; object
    stores have no folders, but a shared path does)."""
    for rel in gone:
        storage.delete(*path_parts(rel))
    in_use = {parent for rel in kept for parent in PurePosixPath(rel).parents}
    emptied = {PurePosixPath(rel).parent for rel in gone} - in_use
    for folder in sorted(emptied, key=lambda f: -len(f.parts)):
        if folder.parts:
            storage.delete_folder(*folder.parts)


def _same_content(handle: Readable, entry: FileEntry | None) -> bool:
    """Whether the open file holds exactly what `entry` (from storage's manifest) describes."""
    if entry is None:
        return False
    reader = HashingReader(handle)
    while reader.read(COPY_CHUNK):
        pass
    return reader.entry() == entry


def _stored_files(storage: FolderStorage) -> dict[str, FileEntry]:
    """What storage already holds of the run (a resumed run), from its manifest."""
    try:
        return dict(parse_manifest(storage.read_bytes(MANIFEST_FILE), source=storage.uri).files)
    except (FileNotFoundError, IntegrityError):
        return {}


def run_key_of(run_dir: Path, *, out_dir: Path | None = None) -> str:
    """The run's key below the storage root: the one its local manifest records (a resumed or
    pulled run keeps its place), else its path below `out_dir`, else `<name>/<stamp>`."""
    try:
        local = parse_manifest((run_dir / MANIFEST_FILE).read_bytes(), source=str(run_dir))
        return local.run
    except (FileNotFoundError, IntegrityError):
        pass
    if out_dir is not None:
        return run_dir.resolve().relative_to(out_dir.resolve()).as_posix()
    return f"{run_dir.resolve().parent.name}/{run_dir.resolve().name}"


def storage_out(spec: ExperimentSpec, out: str | Path) -> tuple[ExperimentSpec, Path]:
    """`rlp train --out`: a folder for run folders, or storage (a URI given as a string), which
    becomes the spec's `logging.storage` while run folders go to `runs/`."""
    if isinstance(out, Path) or not is_storage_uri(out):
        return spec, Path(out)
    try:
        check_storage_uri(out)
    except ValueError as exc:
        raise UserError(f"--out: {exc}") from None
    logging = spec.logging.model_copy(update={"storage": out})
    return spec.model_copy(update={"logging": logging}), Path(RUNS_DIR)


def run_uploader(
    spec: ExperimentSpec, run_dir: Path, *, run_key: str, environ: Mapping[str, str] | None = None
) -> RunUploader | None:
    """The uploader of a run whose spec sets `logging.storage`, else None."""
    if spec.logging.storage is None:
        return None
    environ = os.environ if environ is None else environ
    return RunUploader(
        run_dir,
        storage=spec.logging.storage,
        run_key=run_key,
        name=spec.name,
        job_id=current_job_id(environ),
    )
