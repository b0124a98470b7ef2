"""A filesystem for the storage tests whose uploads fail at the last step."""

import threading

import pyarrow.fs as pafs


class FailingMoveFS:
    """Delegates to a real filesystem but fails the final move, like a dropped connection."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self._inner = inner
        self.type_name = "failing"

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def move(self, src: str, dest: str) -> None:
        raise OSError("connection reset during move")


class BlockingFS:
    """Delegates to a real filesystem, but every write waits until `release` is set: a store
    that accepts and never answers (no network needed). `writes` counts the writes begun."""

    def __init__(self, inner: pafs.FileSystem) -> None:
        self._inner = inner
        self.type_name = "blocking"
        self.release = threading.Event()
        self.writes = 0

    def __getattr__(self, name: str):
        return getattr(self._inner, name)

    def open_output_stream(self, path: str, *args, **kwargs):
        self.writes += 1
        self.release.wait()
        return self._inner.open_output_stream(path, *args, **kwargs)
