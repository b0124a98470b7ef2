"""Atomic file and folder writes: write to a temp sibling, fsync, then rename over the target.

A reader (or a resumed run after SIGKILL or a full disk) sees either the old complete file or
the new complete file, never a half-written one; a write that fails names the file it was for.
Files and folders get the modes a plain `open()`/`mkdir()` would (0666/0777 less the umask), so
teammates can read a run folder; `mkstemp`/`mkdtemp` alone would leave them 0600/0700. Secrets
are written with `private=True`.
"""

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol

COPY_CHUNK = 1 << 20
"""Bytes per read when a file is streamed rather than held in memory."""


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _umask() -> int:
    # os.umask can only be read by setting it; set it straight back (one thread at a time
    # writes here, and the window is two syscalls).
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def named(exc: BaseException, path: str | Path) -> BaseException:
    """An OS error from a write to an open file (a full disk, a quota, an I/O error) names no
    file: `[Errno 28] No space left on device`. The same error naming `path`, so the line the
    user sees says which write failed; any other exception as it is (the error types of our
    own, which subclass `OSError`, included)."""
    if type(exc).__module__ != "builtins" or not isinstance(exc, OSError):
        return exc
    if exc.filename is not None or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path))


@contextlib.contextmanager
def writes_named(path: str | Path) -> Iterator[None]:
    """The writes inside raise their OS errors naming `path` where the OS names no file."""
    try:
        yield
    except OSError as exc:
        renamed = named(exc, path)
        if renamed is exc:
            raise
        raise renamed from exc


def write_bytes_atomic(path: str | Path, data: bytes, *, private: bool = False) -> None:
    """Replace `path` with `data` atomically; `private`: mode 0600 whatever the umask."""
    _replace_atomic(path, lambda handle: handle.write(data), private=private)


def write_stream_atomic(path: str | Path, source: Readable) -> None:
    """Replace `path` with everything `source.read()` gives, in chunks (no size limit)."""
    _replace_atomic(path, lambda handle: shutil.copyfileobj(source, handle, COPY_CHUNK))


def _replace_atomic(
    path: str | Path, fill: Callable[[BinaryIO], object], *, private: bool = False
) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with writes_named(path):
            os.fchmod(fd, 0o600 if private else 0o666 & ~_umask())
            with os.fdopen(fd, "wb") as handle:
                fill(handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    _fsync_dir(path.parent)


def write_text_atomic(path: str | Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | Path, obj: Any) -> None:
    write_text_atomic(path, json.dumps(obj, indent=2, sort_keys=True) + "\n")


def remove_directory(path: str | Path) -> None:
    """Remove a folder in one visible step: it is first renamed to a hidden `.NAME.*.tmp`, then
    deleted. A process killed during the (slow) delete leaves only that hidden leftover, never
    a half-deleted folder under the old name that still looks complete."""
    path = Path(path)
    doomed = path.with_name(f".{path.name}.{os.getpid()}-{time.monotonic_ns()}.tmp")
    os.replace(path, doomed)
    shutil.rmtree(doomed, ignore_errors=True)


@contextlib.contextmanager
def atomic_directory(final_path: str | Path) -> Iterator[Path]:
    """Yield a temp folder to fill; on success it is renamed to `final_path` in one step.

    On any error (including a full disk) the temp folder is removed and `final_path` is untouched;
    an OS error that names no file is raised naming `final_path`.
    """
    final_path = Path(final_path)
    final_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(
        tempfile.mkdtemp(prefix=f".{final_path.name}.", suffix=".tmp", dir=final_path.parent)
    )
    try:
        with writes_named(final_path):
            os.chmod(tmp, 0o777 & ~_umask())
            yield tmp
            if final_path.exists():
                remove_directory(final_path)
            os.replace(tmp, final_path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(final_path.parent)
