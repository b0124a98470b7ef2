"""One writer per run folder: an exclusive `flock` on `<run_dir>/.lock`, held while training.

The lock file holds the holder's pid, so a second `rlp train --resume` (or `rlp league add` while
a run trains) is refused naming who holds it. The kernel drops the lock when the holder exits,
even on SIGKILL, so a crashed run never leaves a stale lock behind.
"""

import fcntl
import os
from pathlib import Path
from types import TracebackType

from rl_platform.base.errors import UserError
from rl_platform.utils.atomic import named

LOCK_FILE = ".lock"


class RunFolderBusyError(UserError):
    """Another process writes this run folder."""

    def __init__(self, run_dir: Path, *, holder: str) -> None:
        self.run_dir, self.holder = run_dir, holder
        super().__init__(
            f"{run_dir} is in use by process {holder} (it holds {run_dir / LOCK_FILE}); "
            "wait for it to finish or stop it first"
        )


class RunLock:
    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None

    def __enter__(self) -> "RunLock":
        try:  # O_NOFOLLOW: a `.lock` that is a link must not truncate what it points to
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            if not self.path.is_symlink():
                raise
            raise UserError(
                f"{self.path} is a symbolic link; a run folder's files must be its own"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise RunFolderBusyError(self.path.parent, holder=holder) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:  # a full disk: the lock let go, the error naming the file
            os.close(fd)
            raise named(exc, self.path) from exc
        self._fd = fd
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
