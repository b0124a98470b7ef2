"""Run folders on storage without Ray: `logging.storage` validation, the uploader (manifest
last, skips, pruning, failures as warnings) and `rlp pull` (verification, destinations)
on fake run folders, with a local folder (`file://`, a `SubTreeFileSystem`) as the bucket."""

import json
import os
import time
from pathlib import Path

import numpy as np
import pyarrow.fs as pafs
import pytest
from loguru import logger
from typer.testing import CliRunner

from rl_platform.base.errors import IntegrityError, SpecError, UnsafePathError, UserError
from rl_platform.cli import app
from rl_platform.spec import load_spec
from rl_platform.storage.bounded_filesystem import BoundedFileSystem
from rl_platform.storage.checkpoints import CheckpointStore
from rl_platform.storage.folder_storage import FolderStorage
from rl_platform.storage.run_manifest import current_job_id, parse_manifest
from rl_platform.storage.run_pull import pull_runs
from rl_platform.storage.run_upload import RunUploader, run_key_of
from rl_platform.utils.storage_uri import check_storage_uri
from tests.conftest import EXPERIMENTS
from tests.unit.storage_support import BlockingFS, FailingMoveFS

KEY = "cartpole_ppo/20261125-101010"


def _run_folder(root: Path) -> Path:
    run_dir = root / KEY
    (run_dir / "tensorboard").mkdir(parents=True)
    (run_dir / "spec.yaml").write_text("name: cartpole_ppo\n")
    (run_dir / "metrics.jsonl").write_text('{"iteration": 1}\n')
    (run_dir / "tensorboard" / "events.out.tfevents.1").write_bytes(b"\x00tb")
    (run_dir / ".lock").write_text("123\n")
    (run_dir / "league" / "weights").mkdir(parents=True)
    (run_dir / "league" / "weights" / "main_v1.safetensors").write_bytes(b"w" * 100)
    (run_dir / "league" / "league.json").write_text("{}\n")
    (run_dir / "tensorboard" / "__pycache__").mkdir()
    (run_dir / "tensorboard" / "__pycache__" / "x.pyc").write_bytes(b"c")
    os.symlink(run_dir / "spec.yaml", run_dir / "tensorboard" / "link.yaml")
    return run_dir


def _checkpoint(run_dir: Path, iteration: int, keep_last: int = 3) -> None:
    parts = {"algorithm": {"w": np.full((2, 2), float(iteration), dtype=np.float32)}}
    CheckpointStore(run_dir / "checkpoints", keep_last=keep_last).save(
        iteration=iteration, parts=parts, meta={"env_steps": iteration * 10}
    )


def _uploader(run_dir: Path, storage: str, job_id: str | None = "rlp_test_0123abcd") -> RunUploader:
    return RunUploader(run_dir, storage=storage, run_key=KEY, name="cartpole_ppo", job_id=job_id)


def _manifest(bucket: Path) -> dict:
    return json.loads((bucket / KEY / "manifest.json").read_text())


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def warnings() -> list[str]:
    messages: list[str] = []
    handle = logger.add(messages.append, level="WARNING", format="{message}")
    yield messages
    logger.remove(handle)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("runs/x", "relative path"),
        ("ftp://host/x", "scheme 'ftp'"),
        ("s3://key:secret@bucket/runs", "no credentials"),
        ("file://relative/x", "absolute path"),
        ("s3:///runs", "name the bucket"),
    ],
)
def test_storage_values_are_checked(value: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        check_storage_uri(value)
    with pytest.raises(SpecError, match=rf"logging\.storage.*{problem}"):
        load_spec(EXPERIMENTS / "cartpole_ppo.yaml", overrides=[f"logging.storage={value}"])


def test_good_storage_values_pass() -> None:
    for value in ("s3://b/runs", "gs://b", "file:///tmp/x", "/mnt/shared/runs", "hdfs://nn/r"):
        assert check_storage_uri(value) == value


def test_upload_mirrors_the_run_and_writes_the_manifest_last(tmp_path: Path) -> None:
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    uploader = _uploader(run_dir, f"file://{bucket}")
    uploader.at_start()
    assert set(_manifest(bucket)["files"]) == {"spec.yaml", "metrics.jsonl"}
    _checkpoint(run_dir, 1)
    uploader.after_checkpoint()
    files = _manifest(bucket)["files"]
    assert "checkpoints/iter_000001/rlp_state.json" in files and "checkpoints/latest" in files
    assert "league/weights/main_v1.safetensors" in files
    assert not any(name.startswith("tensorboard/") for name in files)  # only at the end
    uploader.at_end()
    manifest = _manifest(bucket)
    assert manifest["final"] and manifest["job_id"] == "rlp_test_0123abcd"
    assert manifest["run"] == KEY and "tensorboard/events.out.tfevents.1" in manifest["files"]
    stored = _files(bucket / KEY)
    local = _files(run_dir)
    for name, entry in manifest["files"].items():
        assert stored[name] == local[name] and entry["size"] == len(local[name])
    # No lock, no cache, no symlink; the same manifest beside the run.
    assert set(stored) == set(manifest["files"]) | {"manifest.json"}
    assert stored["manifest.json"] == (run_dir / "manifest.json").read_bytes()


def test_unchanged_files_are_not_sent_again_and_pruned_checkpoints_leave(tmp_path: Path) -> None:
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    uploader = _uploader(run_dir, str(bucket))  # a shared path works like a URI
    for iteration in (1, 2):
        _checkpoint(run_dir, iteration, keep_last=1)
        uploader.after_checkpoint()
    first = (bucket / KEY / "league" / "league.json").stat().st_mtime_ns
    _checkpoint(run_dir, 3, keep_last=1)
    uploader.after_checkpoint()
    assert (bucket / KEY / "league" / "league.json").stat().st_mtime_ns == first
    assert sorted(p.name for p in (bucket / KEY / "checkpoints").iterdir()) == [
        "iter_000003",
        "latest",
    ]
    assert not any("iter_000002" in name for name in _manifest(bucket)["files"])


def test_a_resumed_run_keeps_its_key_and_skips_what_storage_has(tmp_path: Path) -> None:
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    _checkpoint(run_dir, 1)
    _uploader(run_dir, f"file://{bucket}").at_end()
    sent = (bucket / KEY / "checkpoints" / "iter_000001" / "rlp_state.json").stat().st_mtime_ns
    assert run_key_of(run_dir) == KEY  # from the local manifest, wherever the folder is
    resumed = _uploader(run_dir, f"file://{bucket}")
    resumed.after_checkpoint()
    again = (bucket / KEY / "checkpoints" / "iter_000001" / "rlp_state.json").stat().st_mtime_ns
    assert again == sent and not _manifest(bucket)["final"]


def test_a_failed_upload_is_a_warning_and_keeps_the_last_manifest(
    tmp_path: Path, warnings: list[str]
) -> None:
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    _uploader(run_dir, str(bucket)).at_start()
    before = (bucket / KEY / "manifest.json").read_bytes()
    failing = _uploader(run_dir, str(bucket))
    subtree = pafs.SubTreeFileSystem(str(bucket), pafs.LocalFileSystem())
    failing._storage = FolderStorage(FailingMoveFS(subtree), KEY)
    _checkpoint(run_dir, 1)
    failing.after_checkpoint()  # does not raise
    assert any("connection reset" in m and "training goes on" in m for m in warnings)
    assert (bucket / KEY / "manifest.json").read_bytes() == before
    assert not [p for p in (bucket / KEY).rglob(".*.tmp")]
    _uploader(run_dir, "/proc/rlp-no-such-storage").at_start()  # storage nobody can write
    assert len(warnings) == 2


def test_storage_that_does_not_answer_costs_one_bound_and_one_final_try(
    tmp_path: Path, warnings: list[str]
) -> None:
    """Issue #59 D: `--out gs://...` unreachable once trained 2 iterations in 130 s, every
    checkpoint's upload waiting its own 30 s bound. After the first upload times out, uploads
    after checkpoints are skipped (said once) and only the final upload tries again."""
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    bound_s = 0.3
    blocking = BlockingFS(pafs.SubTreeFileSystem(str(bucket), pafs.LocalFileSystem()))
    uploader = _uploader(run_dir, "gs://bucket/runs")
    uploader._storage = FolderStorage(
        BoundedFileSystem(blocking, uri="gs://x", seconds=bound_s), KEY
    )
    try:
        started = time.monotonic()
        uploader.at_start()
        for iteration in (1, 2, 3):
            _checkpoint(run_dir, iteration)
            uploader.after_checkpoint()
        assert time.monotonic() - started < 2 * bound_s  # one bound, not one per checkpoint
        assert blocking.writes == 1 and not uploader.stored
        assert len(warnings) == 1, warnings
        assert "RLP_NETWORK_TIMEOUT_S=0.3 s" in warnings[0]
        assert "without uploads after checkpoints" in warnings[0]
        assert "one final upload is tried when the run ends" in warnings[0]
        uploader.at_end()  # the one final try: still no answer
        assert blocking.writes == 2 and not uploader.stored
        assert len(warnings) == 2 and "the run is only in its run folder" in warnings[1]
    finally:
        blocking.release.set()


def test_storage_that_answers_again_stores_the_run_at_the_end(tmp_path: Path) -> None:
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    blocking = BlockingFS(pafs.SubTreeFileSystem(str(bucket), pafs.LocalFileSystem()))
    uploader = _uploader(run_dir, "gs://bucket/runs")
    uploader._storage = FolderStorage(BoundedFileSystem(blocking, uri="gs://x", seconds=0.3), KEY)
    uploader.at_start()
    _checkpoint(run_dir, 1)
    uploader.after_checkpoint()  # skipped
    blocking.release.set()
    uploader.at_end()
    assert uploader.stored and _manifest(bucket)["final"]
    assert "checkpoints/iter_000001/rlp_state.json" in _manifest(bucket)["files"]


def test_job_id_comes_from_rlp_submit_or_rays_job_config() -> None:
    assert current_job_id({"RLP_JOB_ID": "rlp_x_01234567"}) == "rlp_x_01234567"
    config = json.dumps({"metadata": {"job_submission_id": "raysubmit_abc"}})
    assert current_job_id({"RAY_JOB_CONFIG_JSON_ENV_VAR": config}) == "raysubmit_abc"
    assert current_job_id({}) is None


def _stored(tmp_path: Path, *, job_id: str = "rlp_test_0123abcd") -> tuple[Path, Path]:
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    _checkpoint(run_dir, 1)
    _uploader(run_dir, f"file://{bucket}", job_id=job_id).at_end()
    return run_dir, bucket


def test_pull_by_uri_by_key_and_by_job_id_is_byte_identical(tmp_path: Path, monkeypatch) -> None:
    run_dir, bucket = _stored(tmp_path)
    expected = {k: v for k, v in _files(run_dir).items() if k in _manifest(bucket)["files"]}
    expected["manifest.json"] = (run_dir / "manifest.json").read_bytes()
    [by_uri] = pull_runs(f"file://{bucket}/{KEY}", to=tmp_path / "a")
    [by_key] = pull_runs(KEY, storage=str(bucket), to=tmp_path / "b")
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path / "home")
    [by_job] = pull_runs("rlp_test_0123abcd", storage=f"file://{bucket}")
    assert by_job.dest == Path("runs") / KEY  # the run's own key below runs/
    for pulled in (by_uri, by_key, by_job):
        assert _files(pulled.dest.resolve()) == expected


def test_pull_refuses_tampered_missing_and_unsafe_files(tmp_path: Path) -> None:
    _, bucket = _stored(tmp_path)
    metrics = bucket / KEY / "metrics.jsonl"
    metrics.write_text('{"iteration": 99}\n')
    with pytest.raises(IntegrityError, match=rf"{KEY}/metrics.jsonl: size or sha256 differs"):
        pull_runs(f"file://{bucket}/{KEY}", to=tmp_path / "dest")
    assert not (tmp_path / "dest").exists() and not list(tmp_path.glob(".dest.*"))
    metrics.unlink()
    with pytest.raises(
        IntegrityError, match=r"metrics\.jsonl: listed in manifest\.json but missing"
    ):
        pull_runs(str(bucket / KEY), to=tmp_path / "dest")
    manifest = _manifest(bucket)
    manifest["files"]["../escape"] = manifest["files"].pop("spec.yaml")
    (bucket / KEY / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IntegrityError, match="not a run manifest"):
        pull_runs(str(bucket / KEY), to=tmp_path / "dest")
    with pytest.raises(UnsafePathError):
        pull_runs("../x", storage=str(bucket), to=tmp_path / "dest")


def test_pull_checks_checkpoints_against_their_own_hashes(tmp_path: Path) -> None:
    """A consistent manifest over a tampered checkpoint (storage rewritten with its manifest)
    is still refused: the checkpoint's own rlp_state.json hashes do not match."""
    run_dir, bucket = _run_folder(tmp_path / "runs"), tmp_path / "bucket"
    _checkpoint(run_dir, 1)
    weights = run_dir / "checkpoints" / "iter_000001" / "algorithm.safetensors"
    weights.write_bytes(weights.read_bytes()[:-4] + b"\x00\x00\x00\x00")
    _uploader(run_dir, str(bucket)).at_end()
    with pytest.raises(IntegrityError, match=rf"{KEY}/checkpoints/iter_000001.*sha256"):
        pull_runs(str(bucket / KEY), to=tmp_path / "dest")


def test_pull_refuses_a_non_empty_destination_unless_forced(tmp_path: Path) -> None:
    _, bucket = _stored(tmp_path)
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "spec.yaml").write_text("name: older\n")  # a run folder: --force may replace it
    (dest / "mine.txt").write_text("keep")
    with pytest.raises(UserError, match="not empty; pass --force"):
        pull_runs(str(bucket / KEY), to=dest)
    assert (dest / "mine.txt").read_text() == "keep"
    pull_runs(str(bucket / KEY), to=dest, force=True)
    assert not (dest / "mine.txt").exists() and (dest / "manifest.json").is_file()


def test_pull_cli_errors_are_one_line(tmp_path: Path) -> None:
    _, bucket = _stored(tmp_path)
    (bucket / KEY / "spec.yaml").write_text("name: evil\n")
    runner = CliRunner()
    result = runner.invoke(app, ["pull", f"file://{bucket}/{KEY}", "--to", str(tmp_path / "d")])
    assert result.exit_code == 2, result.output
    assert "spec.yaml: size or sha256 differs" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.output
    (bucket / KEY / "manifest.json").unlink()
    result = runner.invoke(app, ["pull", str(bucket / KEY), "--to", str(tmp_path / "d")])
    assert result.exit_code == 2 and "no manifest.json" in result.stderr
    result = runner.invoke(app, ["pull", "rlp_nope_01234567", "--from", str(bucket)])
    assert result.exit_code == 2 and "no run of job rlp_nope_01234567" in result.stderr


def test_pull_json_lists_each_run(tmp_path: Path) -> None:
    _, bucket = _stored(tmp_path)
    result = CliRunner().invoke(
        app, ["pull", KEY, "--from", f"file://{bucket}", "--to", str(tmp_path / "d"), "--json"]
    )
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert row["dest"] == str(tmp_path / "d") and row["final"] and row["files"] > 5


def test_a_job_with_several_runs_pulls_each_under_its_key(tmp_path: Path) -> None:
    bucket = tmp_path / "bucket"
    for seed in (0, 1):
        run_dir = tmp_path / "runs" / f"seed_{seed}"
        run_dir.mkdir(parents=True)
        (run_dir / "spec.yaml").write_text(f"seed: {seed}\n")
        key = f"seeds/cartpole_ppo/20261125-101010/seed_{seed}"
        RunUploader(run_dir, storage=str(bucket), run_key=key, name="c", job_id="rlp_s").at_end()
    pulled = pull_runs("rlp_s", storage=str(bucket), to=tmp_path / "home")
    assert [p.dest for p in pulled] == [
        tmp_path / "home" / "seeds" / "cartpole_ppo" / "20261125-101010" / f"seed_{s}"
        for s in (0, 1)
    ]
    assert parse_manifest((pulled[1].dest / "manifest.json").read_bytes(), source="x").run.endswith(
        "seed_1"
    )
