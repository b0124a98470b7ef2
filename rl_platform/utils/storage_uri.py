"""What counts as run storage (`logging.storage`, `rlp train --out URI`, `rlp pull --from`):
a URI that `pyarrow.fs.FileSystem.from_uri` opens, or an absolute path on a shared mount.

Checked here without touching the network, so a typo fails when the spec is validated, not
after the first checkpoint. Credentials never go into the URI: Ray shows entrypoints and the
resolved spec (`spec.yaml`) keeps the value, so they come from the environment
(`AWS_ACCESS_KEY_ID`, `GOOGLE_APPLICATION_CREDENTIALS`, an instance role).
"""

from pathlib import PurePosixPath
from urllib.parse import urlsplit, urlunsplit

STORAGE_SCHEMES = ("s3", "gs", "gcs", "hdfs", "file")
"""The filesystems pyarrow's wheels open from a URI."""


def is_storage_uri(text: str) -> bool:
    """A URI (`scheme://...`) rather than a plain local path."""
    return "://" in text


def check_storage_uri(text: str) -> str:
    """Return `text` if it names run storage, else raise `ValueError` saying what is wrong."""
    if not is_storage_uri(text):
        if not PurePosixPath(text).is_absolute():
            raise ValueError(
                f"{text!r} is a relative path: use a URI (s3://bucket/runs, gs://..., "
                "file:///abs/path) or an absolute path on storage every node shares"
            )
        return text
    parts = urlsplit(text)
    if parts.scheme not in STORAGE_SCHEMES:
        raise ValueError(
            f"{text!r}: scheme {parts.scheme!r} is not one of {', '.join(STORAGE_SCHEMES)}"
        )
    if "@" in parts.netloc:
        raise ValueError(
            f"{parts.scheme}://...@...: no credentials in the URI (they would be shown with the "
            "job and saved in spec.yaml); set them in the environment instead"
        )
    if parts.scheme == "file" and (parts.netloc or not parts.path.startswith("/")):
        raise ValueError(f"{text!r}: a file URI needs an absolute path, file:///abs/path")
    if parts.scheme != "file" and not parts.netloc:
        raise ValueError(f"{text!r}: name the bucket or host, e.g. {parts.scheme}://bucket/runs")
    return text


def join_storage_uri(base: str, key: str) -> str:
    """`base` with the relative `key` appended to its path (a URI's query string stays last)."""
    if not is_storage_uri(base):
        return str(PurePosixPath(base, key))
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{key}"))
