"""FolderStorage: keys stay under the root; non-local writes go through a temp key."""

from pathlib import Path

import pyarrow.fs as pafs
import pytest

from rl_platform.base.errors import UnsafePathError
from rl_platform.storage.folder_storage import FolderStorage
from tests.unit.storage_support import FailingMoveFS


def _subtree(tmp_path: Path) -> pafs.SubTreeFileSystem:
    return pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())


@pytest.mark.parametrize("remote", [False, True])
def test_bytes_json_list_exists_delete(tmp_path: Path, remote: bool) -> None:
    storage = (
        FolderStorage(_subtree(tmp_path), "root") if remote else FolderStorage.from_uri(tmp_path)
    )
    assert not storage.exists("a.json")
    storage.write_json("a.json", obj={"x": [1, 2]})
    storage.write_bytes("weights", "w.bin", data=b"\x00\x01")
    storage.write_bytes("weights", "w.bin", data=b"\x02")  # overwrite replaces
    assert storage.read_json("a.json") == {"x": [1, 2]}
    assert storage.read_bytes("weights", "w.bin") == b"\x02"
    assert storage.list("weights") == ["w.bin"]
    assert storage.list("nothing_here") == []
    storage.delete("weights", "w.bin")
    storage.delete("weights", "w.bin")  # deleting twice is fine (retries after crashes)
    assert storage.list("weights") == []
    with pytest.raises(FileNotFoundError):
        storage.read_bytes("weights", "w.bin")


@pytest.mark.parametrize("bad", ["../x", "a/b", "..", "/abs", "a\x00b"])
def test_unsafe_components_are_rejected(tmp_path: Path, bad: str) -> None:
    for storage in (FolderStorage.from_uri(tmp_path), FolderStorage(_subtree(tmp_path), "r")):
        with pytest.raises(UnsafePathError):
            storage.write_bytes("weights", bad, data=b"x")
    assert list(tmp_path.rglob("*")) == []


def test_failed_remote_write_leaves_no_final_or_temp_key(tmp_path: Path) -> None:
    storage = FolderStorage(_subtree(tmp_path), "root")
    storage.write_bytes("f.bin", data=b"old")
    failing = FolderStorage(FailingMoveFS(_subtree(tmp_path)), "root")
    with pytest.raises(OSError, match="connection reset"):
        failing.write_bytes("f.bin", data=b"new")
    assert storage.read_bytes("f.bin") == b"old"
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["f.bin"]


def test_from_uri_accepts_plain_paths_and_file_uris(tmp_path: Path) -> None:
    plain = FolderStorage.from_uri(tmp_path / "p")
    uri = FolderStorage.from_uri(f"file://{tmp_path}/p")
    plain.write_bytes("x", data=b"1")
    assert uri.read_bytes("x") == b"1"
    assert plain.uri == str(tmp_path / "p")
