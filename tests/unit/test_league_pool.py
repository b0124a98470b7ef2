"""LeaguePool persistence, integrity checks, deep copies, eviction and failed writes."""

import json
from pathlib import Path

import pyarrow.fs as pafs
import pytest
import torch

from rl_platform.base.errors import IntegrityError, UnsafePathError, UserError
from rl_platform.league.members import Member, MemberKind
from rl_platform.league.pool import MANIFEST, WEIGHTS_DIR, LeaguePool
from rl_platform.storage.folder_storage import FolderStorage


def _weights(seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {"pi.weight": torch.randn(4, 3, generator=gen), "pi.bias": torch.randn(4, generator=gen)}


def _fill(pool: LeaguePool) -> None:
    pool.add_member(Member(id="main", kind=MemberKind.MAIN))
    pool.add_member(Member(id="based", kind=MemberKind.SCRIPTED, metadata={"agent": "based"}))
    pool.add_frozen(member_id="main_v1", weights=_weights(1), parent_id="main", created_at_step=7)


def _storages(tmp_path: Path) -> dict[str, FolderStorage]:
    sub = tmp_path / "sub"
    sub.mkdir()
    return {
        "local": FolderStorage.from_uri(tmp_path / "local"),
        "file_uri": FolderStorage.from_uri(f"file://{tmp_path / 'uri'}"),
        "subtree": FolderStorage(pafs.SubTreeFileSystem(str(sub), pafs.LocalFileSystem()), "lg"),
    }


@pytest.mark.parametrize("kind", ["local", "file_uri", "subtree"])
def test_round_trip_on_each_storage(tmp_path: Path, kind: str) -> None:
    storage = _storages(tmp_path)[kind]
    pool = LeaguePool(storage)
    _fill(pool)
    pool.save({"answer": 42})

    reopened, state = LeaguePool.open(storage)
    assert state == {"answer": 42}
    assert reopened.ids == ["main", "based", "main_v1"]
    assert reopened.get("main_v1") == pool.get("main_v1")
    assert reopened.get("main_v1").created_at_step == 7
    loaded = reopened.load_weights("main_v1")
    for name, tensor in _weights(1).items():
        assert torch.equal(loaded[name], tensor)
    assert storage.list(WEIGHTS_DIR) == ["main_v1.safetensors"]


def test_file_uri_and_plain_path_address_the_same_files(tmp_path: Path) -> None:
    pool = LeaguePool(FolderStorage.from_uri(f"file://{tmp_path}"))
    _fill(pool)
    pool.save()
    assert json.loads((tmp_path / MANIFEST).read_text())["members"][2]["id"] == "main_v1"
    assert (tmp_path / WEIGHTS_DIR / "main_v1.safetensors").is_file()


def test_snapshot_is_a_deep_copy_of_the_source(tmp_path: Path) -> None:
    source = {"w": torch.zeros(5), "shared": torch.ones(2, 2)}
    source["view"] = source["shared"][0]  # a view sharing storage must still serialize
    pool = LeaguePool(tmp_path)
    pool.add_frozen(member_id="main_v1", weights=source)
    with torch.no_grad():
        source["w"].add_(100.0)
        source["shared"].mul_(-1.0)
    loaded = pool.load_weights("main_v1")
    assert torch.equal(loaded["w"], torch.zeros(5))
    assert torch.equal(loaded["shared"], torch.ones(2, 2))
    assert torch.equal(loaded["view"], torch.ones(2))


def test_numpy_weights_are_accepted_and_non_tensors_rejected(tmp_path: Path) -> None:
    pool = LeaguePool(tmp_path)
    pool.add_frozen(member_id="np_v1", weights={"w": torch.arange(3).numpy()})
    assert torch.equal(pool.load_weights("np_v1")["w"], torch.arange(3))
    with pytest.raises(UserError, match="'bad' is a list"):
        pool.add_frozen(member_id="np_v2", weights={"bad": [1, 2]})
    assert "np_v2" not in pool


def test_tampered_weights_are_rejected_naming_the_member(tmp_path: Path, monkeypatch) -> None:
    pool = LeaguePool(tmp_path)
    _fill(pool)
    pool.save()
    path = tmp_path / WEIGHTS_DIR / "main_v1.safetensors"
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # flip one bit inside the tensor payload
    path.write_bytes(bytes(data))
    reopened, _ = LeaguePool.open(tmp_path)
    deserialized = []
    monkeypatch.setattr("safetensors.torch.load", lambda data: deserialized.append(data))
    with pytest.raises(IntegrityError, match=r"'main_v1'.*do not match"):
        reopened.load_weights("main_v1")
    assert deserialized == []  # the hash is checked before any tensor is read


def test_missing_weights_file_is_an_integrity_error(tmp_path: Path) -> None:
    pool = LeaguePool(tmp_path)
    _fill(pool)
    (tmp_path / WEIGHTS_DIR / "main_v1.safetensors").unlink()
    with pytest.raises(IntegrityError, match="missing"):
        pool.load_weights("main_v1")


@pytest.mark.parametrize("bad_id", ["../x", "a/b", "..", "/abs", "a\x00b", "", ".hidden"])
def test_unsafe_member_ids_are_rejected(tmp_path: Path, bad_id: str) -> None:
    pool = LeaguePool(tmp_path)
    with pytest.raises(UnsafePathError):
        pool.add_frozen(member_id=bad_id, weights=_weights())
    with pytest.raises(UnsafePathError):
        Member(id=bad_id, kind=MemberKind.MAIN)
    assert len(pool) == 0
    assert not any(tmp_path.rglob("*.safetensors"))


def test_manifest_with_an_unsafe_id_does_not_load(tmp_path: Path) -> None:
    pool = LeaguePool(tmp_path)
    _fill(pool)
    pool.save()
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    manifest["members"][2]["weights_file"] = "../../etc/passwd"
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(UnsafePathError):
        LeaguePool.open(tmp_path)


def test_failed_weight_write_registers_nothing(tmp_path: Path, monkeypatch) -> None:
    storage = FolderStorage.from_uri(tmp_path)
    pool = LeaguePool(storage)
    _fill(pool)
    pool.save()
    manifest_before = (tmp_path / MANIFEST).read_bytes()

    import rl_platform.utils.atomic as atomic

    def _write_half_then_fail(path, data):  # the disk fills up half-way through the file
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(str(path) + ".partial").write_bytes(data[: len(data) // 2])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(
        "rl_platform.storage.folder_storage.write_bytes_atomic", _write_half_then_fail
    )
    with pytest.raises(OSError, match="No space"):
        pool.add_frozen(member_id="main_v2", weights=_weights(2))
    monkeypatch.setattr(
        "rl_platform.storage.folder_storage.write_bytes_atomic", atomic.write_bytes_atomic
    )

    assert "main_v2" not in pool
    assert pool.ids == ["main", "based", "main_v1"]
    assert (tmp_path / MANIFEST).read_bytes() == manifest_before
    pool.save()
    assert "main_v2" not in LeaguePool.open(tmp_path)[0]


def test_duplicate_ids_and_wrong_kinds_are_refused(tmp_path: Path) -> None:
    pool = LeaguePool(tmp_path)
    _fill(pool)
    with pytest.raises(UserError, match="already exists"):
        pool.add_frozen(member_id="main_v1", weights=_weights())
    with pytest.raises(UserError, match="use add_frozen"):
        pool.add_member(Member(id="snap", kind=MemberKind.SNAPSHOT))
    with pytest.raises(UserError, match="no league member 'ghost'"):
        pool.get("ghost")


def test_eviction_keeps_main_scripted_checkpoints_and_protected(tmp_path: Path) -> None:
    pool = LeaguePool(tmp_path, max_snapshots=2)
    _fill(pool)
    pool.add_frozen(member_id="ckpt", weights=_weights(), kind=MemberKind.CHECKPOINT)
    _, evicted = pool.add_frozen(member_id="main_v2", weights=_weights(2))
    assert evicted == []
    _, evicted = pool.add_frozen(member_id="main_v3", weights=_weights(3), protected=["main_v1"])
    assert evicted == ["main_v2"]
    _, evicted = pool.add_frozen(member_id="main_v4", weights=_weights(4))
    assert evicted == ["main_v1"]
    assert pool.ids == ["main", "based", "ckpt", "main_v3", "main_v4"]
    # Files go only after a manifest without the evicted members exists.
    assert (tmp_path / WEIGHTS_DIR / "main_v1.safetensors").exists()
    pool.save()
    assert sorted(p.name for p in (tmp_path / WEIGHTS_DIR).iterdir()) == [
        "ckpt.safetensors",
        "main_v3.safetensors",
        "main_v4.safetensors",
    ]


def test_open_prunes_weights_that_were_never_registered(tmp_path: Path) -> None:
    pool = LeaguePool(tmp_path)
    _fill(pool)
    pool.save()
    pool.add_frozen(member_id="main_v2", weights=_weights(2))  # crash before the manifest save
    viewer, _ = LeaguePool.open(tmp_path)  # a read-only viewer leaves the file alone
    assert (tmp_path / WEIGHTS_DIR / "main_v2.safetensors").exists()
    reopened, _ = LeaguePool.open(tmp_path, prune=True)
    assert "main_v2" not in reopened and "main_v2" not in viewer
    assert sorted(p.name for p in (tmp_path / WEIGHTS_DIR).iterdir()) == ["main_v1.safetensors"]


def test_unknown_manifest_version_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / MANIFEST).write_text(json.dumps({"version": 99, "members": []}))
    with pytest.raises(UserError, match="unsupported league manifest version 99"):
        LeaguePool.open(tmp_path)
