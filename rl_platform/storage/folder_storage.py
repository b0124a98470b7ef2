"""One folder of storage, local or an object store, through `pyarrow.fs`: where the league pool
lives and where run folders are mirrored (`rl_platform.storage.run_upload`).

Keys are built only from `check_name`-validated components, so no member id or manifest entry
can address a file outside the root. Writes are atomic from a reader's point of view:

* Local filesystem: the shared atomic helpers (temp sibling, fsync, rename).
* Any other filesystem (S3, GCS, a `SubTreeFileSystem`, ...): write a hidden temp key, then
  `move` it onto the final key. A single object PUT is already atomic on S3/GCS, but pyarrow's
  output streams *finish* the upload when closed, even when closed by an exception, so writing
  the final key directly could publish a truncated object. Writing a temp key first means a
  failed write leaves the final key untouched (the temp key is deleted on error).
"""

import contextlib
import json
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.fs as pafs

from rl_platform.base.errors import IntegrityError
from rl_platform.storage.bounded_filesystem import BoundedFileSystem, open_filesystem
from rl_platform.utils.atomic import (
    COPY_CHUNK,
    Readable,
    write_bytes_atomic,
    write_stream_atomic,
)
from rl_platform.utils.names import check_name, safe_join

_TEMP_PREFIX = "."


class FolderStorage:
    """Byte and JSON storage rooted at one folder of a `pyarrow.fs.FileSystem`."""

    def __init__(self, filesystem: "pafs.FileSystem | BoundedFileSystem", root: str) -> None:
        self.filesystem = filesystem
        self.root = root.rstrip("/") if root not in {"", "/"} else root
        self._local = isinstance(filesystem, pafs.LocalFileSystem)
        if self._local:
            self.root = str(Path(root).resolve())

    @classmethod
    def from_uri(cls, uri: str | Path) -> "FolderStorage":
        """A local path (`runs/x/league`), `file:///abs/path`, `s3://bucket/key` or `gs://...`."""
        text = str(uri)
        if "://" not in text:
            return cls(pafs.LocalFileSystem(), str(Path(text).resolve()))
        filesystem, root = open_filesystem(text)  # every call bounded (bounded_filesystem)
        return cls(filesystem, root)

    @property
    def is_local(self) -> bool:
        """A folder of this machine's filesystem; `root` is then its resolved path."""
        return self._local

    @property
    def uri(self) -> str:
        """Human-readable location for messages."""
        return self.root if self._local else f"{self.filesystem.type_name}://{self.root}"

    def _key(self, parts: tuple[str, ...]) -> str:
        if not parts:
            return self.root
        names = [check_name(part, what="storage path component") for part in parts]
        if self._local:
            return str(safe_join(self.root, *names))
        return "/".join([self.root, *names]) if self.root else "/".join(names)

    def child(self, *parts: str) -> "FolderStorage":
        """The folder `parts` below this one, on the same filesystem."""
        return FolderStorage(self.filesystem, self._key(parts))

    def write_bytes(self, *parts: str, data: bytes) -> None:
        key = self._key(parts)
        if self._local:
            write_bytes_atomic(key, data)
            return
        self._write_remote(key, lambda stream: stream.write(data))

    def upload(self, source: Readable, *parts: str) -> None:
        """Write everything `source.read()` gives to `parts`, streamed, with the same
        atomicity as `write_bytes`."""
        key = self._key(parts)
        if self._local:
            write_stream_atomic(key, source)
            return
        self._write_remote(key, lambda stream: shutil.copyfileobj(source, stream, COPY_CHUNK))

    def _write_remote(self, key: str, fill: Callable[[BinaryIO], object]) -> None:
        parent, _, name = key.rpartition("/")
        if parent:
            self.filesystem.create_dir(parent, recursive=True)
        temp_key = f"{parent}/{_TEMP_PREFIX}{name}.{uuid.uuid4().hex}.tmp"
        try:
            with self.filesystem.open_output_stream(temp_key) as stream:
                fill(stream)
            self.filesystem.move(temp_key, key)
        except BaseException:
            self._delete_quietly(temp_key)
            raise

    def open_input(self, *parts: str) -> pa.NativeFile:
        """A stream to read in chunks (`with storage.open_input(...) as stream:`); raises
        `FileNotFoundError` if the key does not exist."""
        return self.filesystem.open_input_stream(self._key(parts))

    def read_bytes(self, *parts: str) -> bytes:
        """Raise `FileNotFoundError` if the key does not exist."""
        with self.open_input(*parts) as stream:
            return stream.read()

    def write_json(self, *parts: str, obj: Any) -> None:
        text = json.dumps(obj, indent=2, sort_keys=True) + "\n"
        self.write_bytes(*parts, data=text.encode("utf-8"))

    def read_json(self, *parts: str) -> Any:
        """Raise `FileNotFoundError` if the key does not exist, `IntegrityError` if it is not
        JSON (a truncated or hand-edited league file)."""
        try:
            return json.loads(self.read_bytes(*parts).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise IntegrityError(
                f"{self._key(parts)}: not valid JSON ({exc}); the file was modified or truncated"
            ) from None

    def exists(self, *parts: str) -> bool:
        """Anything at the key: a file, or a folder (`kind` tells which)."""
        return self.kind(*parts) != "missing"

    def kind(self, *parts: str) -> str:
        """What the key holds: "file", "folder", "missing" or "other" (a device, a socket)."""
        kinds = {
            pafs.FileType.File: "file",
            pafs.FileType.Directory: "folder",
            pafs.FileType.NotFound: "missing",
        }
        return kinds.get(self.filesystem.get_file_info(self._key(parts)).type, "other")

    # Defined before `list`, which shadows the builtin in the rest of this class body.
    def walk(self) -> list[tuple[str, ...]]:
        """Every file below the root as its path components, sorted; hidden temp keys and
        anything below a hidden folder are skipped."""
        selector = pafs.FileSelector(self.root, allow_not_found=True, recursive=True)
        prefix = self.root.rstrip("/") + "/" if self.root not in {"", "/"} else self.root
        found = []
        for info in self.filesystem.get_file_info(selector):
            if info.type != pafs.FileType.File or not info.path.startswith(prefix):
                continue
            parts = tuple(info.path[len(prefix) :].split("/"))
            if not any(part.startswith(_TEMP_PREFIX) for part in parts):
                found.append(parts)
        return sorted(found)

    def list(self, *parts: str) -> list[str]:
        """Sorted file names directly under the folder; hidden temp files are skipped."""
        selector = pafs.FileSelector(self._key(parts), allow_not_found=True, recursive=False)
        infos = self.filesystem.get_file_info(selector)
        names = (info.base_name for info in infos if info.type == pafs.FileType.File)
        return sorted(name for name in names if not name.startswith(_TEMP_PREFIX))

    def delete(self, *parts: str) -> None:
        """Delete a file; a missing file is not an error (deletes are retried after crashes)."""
        self._delete_quietly(self._key(parts))

    def delete_folder(self, *parts: str) -> None:
        """Delete a folder below the root and all it holds; a missing one is not an error."""
        if not parts:
            raise ValueError("refusing to delete the storage root")
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_dir(self._key(parts))

    def _delete_quietly(self, key: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_file(key)
