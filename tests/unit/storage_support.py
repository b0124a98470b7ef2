"""A filesystem for the storage tests whose uploads fail at the last step."""

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
