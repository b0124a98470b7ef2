"""A remote `pyarrow.fs` filesystem whose every call waits at most `RLP_NETWORK_TIMEOUT_S`.

pyarrow waits long on a store it cannot reach: S3 resolves a bucket's region with no timeout
and retries each request with the SDK's defaults, GCS retries for 15 minutes and never gives up
on a server that accepts a connection and does not answer (measured: still waiting after
100 s). `open_filesystem` opens a URI with S3's own connect and request timeouts set from the
bound, and wraps the filesystem so that each call, and each read, write and close of the
streams it opens, is one `call_within`: a store that does not answer is an error within the
bound (`NetworkTimeoutError`, naming the bound), never a silent wait.
"""

from typing import Any

import pyarrow.fs as pafs

from rl_platform.utils.network_timeout import call_within, network_timeout_s

_STREAM_CALLS = {"read": "reading", "write": "writing", "close": "finishing a write"}
_STREAM_CALLS |= {"flush": "writing", "seek": "reading", "tell": "reading", "readall": "reading"}
_FILESYSTEM_CALLS = {
    "create_dir": "creating a folder",
    "delete_dir": "deleting a folder",
    "delete_file": "deleting",
    "get_file_info": "listing",
    "move": "moving",
    "open_input_stream": "reading",
    "open_output_stream": "writing",
}
"""The calls bounded, with the words that name them in a message."""


def open_filesystem(uri: str) -> tuple[pafs.FileSystem, str]:
    """`pafs.FileSystem.from_uri(uri)`; a remote one bounded as the module docstring says."""
    seconds = network_timeout_s()
    filesystem, root = call_within(
        lambda: pafs.FileSystem.from_uri(uri), seconds=seconds, what=f"opening {uri}"
    )
    if isinstance(filesystem, pafs.LocalFileSystem):
        return filesystem, root
    if isinstance(filesystem, pafs.S3FileSystem):
        _, (options,) = filesystem.__reduce__()
        options.update(connect_timeout=seconds, request_timeout=seconds)
        filesystem = pafs.S3FileSystem(**options)
    return BoundedFileSystem(filesystem, uri=uri, seconds=seconds), root


class _Bounded:
    """Calls `target`'s methods named in `calls` through `call_within`; the rest as they are."""

    def __init__(self, target: Any, *, where: str, seconds: float, calls: dict[str, str]):
        self._target, self._where, self._seconds, self._calls = target, where, seconds, calls

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if name not in self._calls:
            return attribute

        def bounded(*args: Any, **kwargs: Any) -> Any:
            result = call_within(
                lambda: attribute(*args, **kwargs),
                seconds=self._seconds,
                what=f"{self._calls[name]} {self._where}",
            )
            if name.startswith("open_"):
                return _BoundedStream(result, where=self._where, seconds=self._seconds)
            return result

        return bounded


class BoundedFileSystem(_Bounded):
    """A remote filesystem whose calls wait at most `seconds` each."""

    def __init__(self, filesystem: pafs.FileSystem, *, uri: str, seconds: float) -> None:
        super().__init__(filesystem, where=uri, seconds=seconds, calls=_FILESYSTEM_CALLS)


class _BoundedStream(_Bounded):
    """A stream of a `BoundedFileSystem`: reads, writes and close wait at most `seconds`."""

    def __init__(self, stream: Any, *, where: str, seconds: float) -> None:
        super().__init__(stream, where=where, seconds=seconds, calls=_STREAM_CALLS)

    def __enter__(self) -> "_BoundedStream":
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
