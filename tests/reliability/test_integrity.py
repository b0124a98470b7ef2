"""Check 3: checkpoints, exports and league weights are safetensors + JSON only, and a tampered
file is rejected by its recorded sha256 before any tensor is deserialized."""

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch
import torch
from typer.testing import CliRunner

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.cli import app
from rl_platform.league import League, LeagueSpec
from rl_platform.league.pool import MANIFEST, WEIGHTS_DIR
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.utils import state_codec
from tests.reliability.support import TINY, flip_byte, read_metrics, sets


def _only_safetensors_or_json(root: Path, *, pointer_files: frozenset[str] = frozenset()) -> int:
    """Every file parses as safetensors or JSON (or is a one-line `iter_NNNNNN` pointer)."""
    count = 0
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        count += 1
        if path.name in pointer_files:
            assert re.fullmatch(r"iter_\d{6,}\n", path.read_text()), path
        elif path.suffix == ".safetensors":
            with safetensors.safe_open(path, framework="np") as handle:
                assert list(handle.keys()), f"{path} holds no tensors"
        elif path.suffix == ".json":
            json.loads(path.read_text())
        else:
            raise AssertionError(f"{path}: neither safetensors nor JSON")
    return count


def _spy_on_tensor_decoding(monkeypatch) -> list[str]:
    """Record (and refuse) every attempt to decode safetensors bytes."""
    calls: list[str] = []

    def refuse(*args, **kwargs):
        calls.append("decode")
        raise AssertionError("tensors were decoded from a file that failed its hash check")

    monkeypatch.setattr(state_codec, "load_arrays", refuse)
    monkeypatch.setattr(safetensors.torch, "load", refuse)
    return calls


# ----- checkpoints -------------------------------------------------------------------------
def test_checkpoints_hold_only_safetensors_and_json(smoke_run):
    checkpoints = smoke_run.run_dir / "checkpoints"
    names = {p.name for p in checkpoints.rglob("*") if p.is_file()}
    assert names == {"latest", "algorithm.safetensors", "algorithm.json", "rlp_state.json"}
    assert _only_safetensors_or_json(checkpoints, pointer_files=frozenset({"latest"})) >= 7


def test_export_writes_plain_safetensors_equal_to_the_checkpoint(smoke_run, tmp_path):
    out = tmp_path / "policy.safetensors"
    result = CliRunner().invoke(app, ["export", str(smoke_run.run_dir), str(out)])
    assert result.exit_code == 0, result.output
    exported = safetensors.numpy.load_file(out)
    with safetensors.safe_open(out, framework="np") as handle:
        assert handle.metadata()["format"] == "rlp-policy-v1"
        module_id = handle.metadata()["module_id"]
    store = CheckpointStore(smoke_run.run_dir / "checkpoints")
    saved = module_weights(load_checkpoint(store.latest()).parts[ALGORITHM_PART])[module_id]
    assert set(exported) == set(saved)
    for name, array in saved.items():
        np.testing.assert_array_equal(exported[name], array)
    assert _only_safetensors_or_json(tmp_path) == 1


def _tampered_copy(smoke_run, tmp_path: Path, how: str) -> tuple[Path, Path]:
    """A copy of the smoke run whose latest checkpoint was altered in one way."""
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    latest = CheckpointStore(run_dir / "checkpoints").latest()
    arrays = latest / "algorithm.safetensors"
    if how == "flip_last_byte":
        flip_byte(arrays)
    elif how == "flip_header_byte":
        flip_byte(arrays, offset=12)
    elif how == "truncate":
        arrays.write_bytes(arrays.read_bytes()[:-64])
    elif how == "append":
        arrays.write_bytes(arrays.read_bytes() + b"\0" * 16)
    elif how == "swap_in_older_checkpoint":  # valid safetensors, wrong content
        older = CheckpointStore(run_dir / "checkpoints").complete_checkpoints()[0]
        assert older != latest
        shutil.copyfile(older / "algorithm.safetensors", arrays)
    elif how == "rehash_part_json":  # attacker also updates the part's own hash
        flip_byte(arrays)
        document = json.loads((latest / "algorithm.json").read_text())
        document["sha256"] = state_codec.sha256_bytes(arrays.read_bytes())
        (latest / "algorithm.json").write_text(json.dumps(document))
    else:
        raise ValueError(how)
    return run_dir, latest


TAMPERING = [
    "flip_last_byte",
    "flip_header_byte",
    "truncate",
    "append",
    "swap_in_older_checkpoint",
    "rehash_part_json",
]


@pytest.mark.parametrize("how", TAMPERING)
def test_tampered_checkpoint_is_rejected_before_any_tensor_is_read(
    smoke_run, tmp_path, monkeypatch, how
):
    _, latest = _tampered_copy(smoke_run, tmp_path, how)
    decoded = _spy_on_tensor_decoding(monkeypatch)
    with pytest.raises(IntegrityError, match="sha256") as info:
        load_checkpoint(latest)
    assert "algorithm.safetensors" in str(info.value)
    assert decoded == []


def test_resume_from_a_tampered_checkpoint_exits_2_with_a_clear_message(
    smoke_run, ray_local, tmp_path
):
    run_dir, latest = _tampered_copy(smoke_run, tmp_path, "flip_last_byte")
    metrics_before = (run_dir / "metrics.jsonl").read_text()
    args = ["train", str(smoke_run.spec_path), *sets(TINY), "--resume", str(run_dir)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "algorithm.safetensors" in result.output
    assert "does not match the recorded" in result.output and "refusing to load" in result.output
    # Nothing was trained or checkpointed on top of the tampered state.
    assert (run_dir / "metrics.jsonl").read_text() == metrics_before
    assert CheckpointStore(run_dir / "checkpoints").latest() == latest
    assert len(read_metrics(run_dir)) == smoke_run.iterations


def test_export_of_a_tampered_checkpoint_exits_2_and_writes_nothing(smoke_run, tmp_path):
    run_dir, _ = _tampered_copy(smoke_run, tmp_path, "flip_last_byte")
    out = tmp_path / "policy.safetensors"
    result = CliRunner().invoke(app, ["export", str(run_dir), str(out)])
    assert result.exit_code == 2, result.output
    assert "sha256" in result.output and "Traceback" not in result.output
    assert not out.exists()


def _edit_record(latest: Path, how: str) -> None:
    """Edit `rlp_state.json` (and maybe a part) the ways that once switched integrity off."""
    meta_path = latest / "rlp_state.json"
    meta = json.loads(meta_path.read_text())
    if how == "drop_files_record":
        del meta["files"]
    elif how == "drop_every_hash":
        for key in ("files", "sha256", "meta_sha256"):
            meta.pop(key)
    elif how == "edit_env_steps":
        meta["env_steps"] += 1_000_000
    elif how == "swap_part_json_and_drop_files":
        document = json.loads((latest / "algorithm.json").read_text())
        document["tree"] = {"swapped": document["tree"]}
        (latest / "algorithm.json").write_text(json.dumps(document))
        del meta["files"]
    elif how == "add_unrecorded_file":
        (latest / "extra.json").write_text("{}")
    else:
        raise ValueError(how)
    meta_path.write_text(json.dumps(meta))


RECORD_TAMPERING = [
    "drop_files_record",
    "drop_every_hash",
    "edit_env_steps",
    "swap_part_json_and_drop_files",
    "add_unrecorded_file",
]


@pytest.mark.parametrize("how", RECORD_TAMPERING)
def test_a_checkpoint_whose_record_was_edited_or_removed_is_refused(
    smoke_run, tmp_path, monkeypatch, how
):
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    latest = CheckpointStore(run_dir / "checkpoints").latest()
    _edit_record(latest, how)
    decoded = _spy_on_tensor_decoding(monkeypatch)
    with pytest.raises(IntegrityError, match=r"rlp_state\.json") as info:
        load_checkpoint(latest)
    assert "refusing to load" in str(info.value) and "\n" not in str(info.value)
    assert decoded == []


def test_resume_from_a_checkpoint_with_an_edited_counter_exits_2(smoke_run, ray_local, tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    latest = CheckpointStore(run_dir / "checkpoints").latest()
    _edit_record(latest, "edit_env_steps")
    metrics_before = (run_dir / "metrics.jsonl").read_text()
    args = ["train", str(smoke_run.spec_path), *sets(TINY), "--resume", str(run_dir)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "edited after it was written" in result.output and "Traceback" not in result.output
    assert (run_dir / "metrics.jsonl").read_text() == metrics_before


# ----- league pool -------------------------------------------------------------------------
def _weights(seed: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {"pi.weight": torch.randn(8, 4, generator=gen), "pi.bias": torch.randn(8, generator=gen)}


def _league_with_snapshots(root: Path) -> League:
    league = League(spec=LeagueSpec(), storage=root, seed=0)
    league.add_snapshot(learner_id="main", weights=_weights(1), env_steps=100)
    league.add_snapshot(learner_id="main", weights=_weights(2), env_steps=200)
    return league


def test_league_pool_holds_only_safetensors_and_a_json_manifest(tmp_path):
    _league_with_snapshots(tmp_path / "league")
    files = sorted(p.relative_to(tmp_path / "league") for p in (tmp_path / "league").rglob("*"))
    weights = [Path(WEIGHTS_DIR, "main_v1.safetensors"), Path(WEIGHTS_DIR, "main_v2.safetensors")]
    assert files == [Path(MANIFEST), Path(WEIGHTS_DIR), *weights]
    assert _only_safetensors_or_json(tmp_path / "league") == 3
    for name in weights:
        loaded = safetensors.torch.load_file(tmp_path / "league" / name)
        assert set(loaded) == {"pi.weight", "pi.bias"}


@pytest.mark.parametrize("how", ["flip_byte", "truncate", "swap_with_other_member"])
def test_tampered_league_member_is_rejected_before_any_tensor_is_read(tmp_path, monkeypatch, how):
    root = tmp_path / "league"
    _league_with_snapshots(root)
    target = root / WEIGHTS_DIR / "main_v1.safetensors"
    if how == "flip_byte":
        flip_byte(target)
    elif how == "truncate":
        target.write_bytes(target.read_bytes()[:100])
    else:
        shutil.copyfile(root / WEIGHTS_DIR / "main_v2.safetensors", target)
    reopened = League(spec=LeagueSpec(), storage=root, seed=0)
    decoded = _spy_on_tensor_decoding(monkeypatch)
    with pytest.raises(IntegrityError, match="main_v1") as info:
        reopened.load_weights("main_v1")
    assert "do not match the manifest" in str(info.value)
    assert isinstance(info.value, UserError)  # shown without a traceback by the CLI
    assert decoded == []


def test_untampered_league_member_loads_exactly(tmp_path):
    root = tmp_path / "league"
    _league_with_snapshots(root)
    loaded = League(spec=LeagueSpec(), storage=root, seed=0).load_weights("main_v2")
    for name, tensor in _weights(2).items():
        assert torch.equal(loaded[name], tensor)
