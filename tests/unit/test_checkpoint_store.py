"""Checkpoint store and state codec: atomic folders, latest pointer, retention, integrity."""

from pathlib import Path

import numpy as np
import pytest

from rl_platform.base.errors import IntegrityError
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint, resolve_checkpoint
from rl_platform.utils.state_codec import load_state_tree, save_state_tree


def _tree(scale: float) -> dict:
    return {
        "learner": {
            "weights": {"w": np.full((3, 2), scale, dtype=np.float32)},
            "optimizer": {"state": {0: {"step": 4.0, "exp_avg": np.arange(3.0)}}},
        },
        "counters": (1, 2),
        "nan_stat": float("nan"),
        "name": "x",
        "none": None,
    }


def test_state_tree_round_trip_keeps_types(tmp_path):
    save_state_tree(_tree(1.5), tmp_path, stem="algo")
    back = load_state_tree(tmp_path, stem="algo")
    assert back["learner"]["optimizer"]["state"][0]["step"] == 4.0  # int key survives
    np.testing.assert_array_equal(back["learner"]["weights"]["w"], np.full((3, 2), 1.5, np.float32))
    assert back["counters"] == (1, 2) and np.isnan(back["nan_stat"]) and back["none"] is None


def test_unstorable_objects_are_refused(tmp_path):
    with pytest.raises(TypeError, match="without pickle"):
        save_state_tree({"fn": object()}, tmp_path, stem="algo")


def test_store_keeps_last_k_and_points_latest(tmp_path):
    store = CheckpointStore(tmp_path, keep_last=2)
    for iteration in (1, 2, 3):
        store.save(
            iteration=iteration,
            parts={"algorithm": _tree(iteration)},
            meta={"env_steps": iteration * 10},
        )
    names = [p.name for p in store.complete_checkpoints()]
    assert names == ["iter_000002", "iter_000003"]
    assert store.latest().name == "iter_000003"
    loaded = load_checkpoint(resolve_checkpoint(tmp_path))
    assert loaded.meta["iteration"] == 3 and loaded.meta["env_steps"] == 30


def test_a_prune_killed_mid_delete_leaves_no_half_deleted_checkpoint(tmp_path, monkeypatch):
    """The pruned folder leaves its name in one step (a rename) before the slow delete: a
    kill during the delete leaves a hidden leftover, which the next save clears."""
    store = CheckpointStore(tmp_path, keep_last=1)
    store.save(iteration=1, parts={"algorithm": _tree(1)}, meta={})

    def killed_mid_delete(path, **kwargs):
        (Path(path) / "algorithm.safetensors").unlink()
        raise KeyboardInterrupt  # stands in for SIGKILL after the first file went

    monkeypatch.setattr("rl_platform.utils.atomic.shutil.rmtree", killed_mid_delete)
    with pytest.raises(KeyboardInterrupt):
        store.save(iteration=2, parts={"algorithm": _tree(2)}, meta={})
    assert [p.name for p in tmp_path.glob("iter_*")] == ["iter_000002"]
    assert len(list(tmp_path.glob(".iter_000001.*.tmp"))) == 1
    monkeypatch.undo()
    store.save(iteration=3, parts={"algorithm": _tree(3)}, meta={})
    assert not list(tmp_path.glob(".iter_*"))
    assert [p.name for p in tmp_path.glob("iter_*")] == ["iter_000003"]


def test_failed_save_leaves_previous_latest(tmp_path, monkeypatch):
    store = CheckpointStore(tmp_path, keep_last=3)
    store.save(iteration=1, parts={"algorithm": _tree(1)}, meta={})

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("rl_platform.storage.checkpoints.save_state_tree", disk_full)
    with pytest.raises(OSError, match="No space"):
        store.save(iteration=2, parts={"algorithm": _tree(2)}, meta={})
    assert store.latest().name == "iter_000001"
    assert not list(tmp_path.glob(".iter_*"))  # temp folder cleaned up
    assert load_checkpoint(store.latest()).meta["iteration"] == 1


def test_tampered_weights_are_rejected_before_use(tmp_path):
    store = CheckpointStore(tmp_path)
    path = store.save(iteration=1, parts={"algorithm": _tree(1)}, meta={})
    blob = bytearray((path / "algorithm.safetensors").read_bytes())
    blob[-1] ^= 0xFF
    (path / "algorithm.safetensors").write_bytes(bytes(blob))
    with pytest.raises(IntegrityError, match="sha256"):
        load_checkpoint(path)


def test_stale_pointer_falls_back_to_newest_complete(tmp_path):
    store = CheckpointStore(tmp_path)
    store.save(iteration=1, parts={"algorithm": _tree(1)}, meta={})
    (tmp_path / "latest").write_text("iter_000009\n")
    assert store.latest().name == "iter_000001"


def test_pinned_checkpoints_survive_retention(tmp_path):
    store = CheckpointStore(tmp_path, keep_last=1)
    first = store.save(iteration=1, parts={"algorithm": _tree(1)}, meta={})
    store.pin(first, reason="bc phase 1 teacher")
    for iteration in (2, 3):
        store.save(iteration=iteration, parts={"algorithm": _tree(iteration)}, meta={})
    assert [p.name for p in store.complete_checkpoints()] == ["iter_000001", "iter_000003"]
    assert store.pins() == {"iter_000001": "bc phase 1 teacher"}
