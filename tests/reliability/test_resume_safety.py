"""Check 18: a resume cannot lose or corrupt a run. Every file of a checkpoint is verified,
`latest` stays inside the run, the resumed spec is checked against the checkpoint before
anything is written, the original spec.yaml is kept, nothing intact means exit 2, a checkpoint
can be named to rewind to, and a second writer of a run folder is refused."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import IntegrityError
from rl_platform.cli import app
from rl_platform.storage.checkpoints import META_FILE, CheckpointStore, load_checkpoint
from tests.reliability.faulty_envs import KWARGS_ENV_ID
from tests.reliability.support import TINY, child_env, read_metrics, sets


def _copy(smoke_run, tmp_path: Path) -> Path:
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    return run_dir


def _resume(smoke_run, target: Path, *extra: str):
    args = ["train", str(smoke_run.spec_path), *sets([*TINY, *extra]), "--resume", str(target)]
    return CliRunner().invoke(app, args)


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(run_dir)): p.read_bytes()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name not in ("train.log", ".lock")
    }


def test_an_edited_part_json_is_refused_like_an_edited_tensor_file(smoke_run, tmp_path):
    latest = CheckpointStore(_copy(smoke_run, tmp_path) / "checkpoints").latest()
    part = latest / "algorithm.json"
    document = json.loads(part.read_text())
    document["tree"]["rlp_tampered"] = 1  # e.g. changed counters or swapped tensor references
    part.write_text(json.dumps(document))
    with pytest.raises(IntegrityError, match=r"algorithm\.json"):
        load_checkpoint(latest)


@pytest.mark.parametrize("pointer", ["../../elsewhere/iter_000009", "/tmp/iter_000009"])
def test_latest_never_points_outside_the_run(pointer, smoke_run, tmp_path):
    checkpoints = _copy(smoke_run, tmp_path) / "checkpoints"
    newest = CheckpointStore(checkpoints).complete_checkpoints()[-1]
    outside = (checkpoints / pointer).resolve() if not pointer.startswith("/") else Path(pointer)
    outside.mkdir(parents=True, exist_ok=True)
    (outside / META_FILE).write_text("{}")
    (checkpoints / "latest").write_text(pointer + "\n")
    assert CheckpointStore(checkpoints).latest() == newest
    shutil.rmtree(outside)


def test_resume_with_nothing_intact_exits_2_and_changes_nothing(smoke_run, tmp_path):
    run_dir = _copy(smoke_run, tmp_path)
    for meta in (run_dir / "checkpoints").glob(f"*/{META_FILE}"):
        meta.unlink()  # every checkpoint incomplete, as after a kill before the first save
    before = _snapshot(run_dir)
    result = _resume(smoke_run, run_dir)
    assert result.exit_code == 2, result.output
    assert "no complete checkpoint" in result.output and "Traceback" not in result.output
    assert _snapshot(run_dir) == before


def test_resume_with_a_model_that_does_not_fit_exits_2_before_ray_starts(
    smoke_run, tmp_path, monkeypatch
):
    """Once refused only by RLlib's `load_state_dict` ("Error(s) in loading state_dict for
    ..."), after Ray had started and the algorithm was built; now from spec.yaml, before."""
    import rl_platform.run.train as run_train

    def never(**_: object) -> None:
        raise AssertionError("Ray started for a resume that cannot fit")

    monkeypatch.setattr(run_train, "ensure_ray", never)
    run_dir = _copy(smoke_run, tmp_path)
    before = _snapshot(run_dir)
    # A raised stop: at its stop the run would train nothing and never build the model.
    result = _resume(smoke_run, run_dir, "model.hidden=[32,32]", "stop.iterations=3")
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert "model.hidden [16, 16] (the spec says [32, 32])" in line, line
    assert "Error(s) in loading" not in line and "Traceback" not in result.output
    assert _snapshot(run_dir) == before  # spec.yaml, metrics and checkpoints untouched


def test_resume_from_a_named_checkpoint_rewinds_and_keeps_the_original_spec(
    smoke_run, ray_local, tmp_path
):
    run_dir = _copy(smoke_run, tmp_path)
    spec_before = (run_dir / "spec.yaml").read_bytes()
    first = CheckpointStore(run_dir / "checkpoints").complete_checkpoints()[0]
    result = _resume(smoke_run, first, "training.lr=0.001")
    assert result.exit_code == 0, result.output
    assert [int(row["iteration"]) for row in read_metrics(run_dir)] == [1, 2]  # no duplicate 2
    assert (run_dir / "spec.yaml").read_bytes() == spec_before
    assert "lr: 0.001" in (run_dir / "spec.resume-1.yaml").read_text()
    record = json.loads((run_dir / "resumes.jsonl").read_text().splitlines()[0])
    assert record["checkpoint"] == first.name
    assert record["changed"]["training.lr"][1] == 0.001


HOLD_LOCK = """
import sys, time
from pathlib import Path
from rl_platform.storage.run_lock import RunLock
with RunLock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_second_writer_of_a_run_folder_is_refused_naming_the_holder(smoke_run, tmp_path):
    run_dir = _copy(smoke_run, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(run_dir)],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = _snapshot(run_dir)
        result = _resume(smoke_run, run_dir)
        assert result.exit_code == 2, result.output
        assert f"in use by process {holder.pid}" in result.output
        assert _snapshot(run_dir) == before
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("where", ["into_latest", "into_checkpoints", "a_folder"])
def test_export_never_writes_into_a_checkpoint(where, smoke_run, tmp_path):
    run_dir = _copy(smoke_run, tmp_path)
    latest = CheckpointStore(run_dir / "checkpoints").latest()
    out = {
        "into_latest": latest / "algorithm.safetensors",
        "into_checkpoints": run_dir / "checkpoints" / "policy.safetensors",
        "a_folder": tmp_path,
    }[where]
    before = _snapshot(run_dir)
    result = CliRunner().invoke(app, ["export", str(run_dir), str(out)])
    assert result.exit_code == 2, result.output
    assert "OUT" in result.output and "Traceback" not in result.output
    assert _snapshot(run_dir) == before


def test_run_folders_honour_the_umask(smoke_run):
    mask = os.umask(0o022)
    os.umask(mask)
    files = [p for p in smoke_run.run_dir.rglob("*") if p.is_file()]
    folders = [p for p in smoke_run.run_dir.rglob("*") if p.is_dir()]
    assert len(files) > 5 and folders
    assert {p.stat().st_mode & 0o777 for p in files} == {0o666 & ~mask}
    assert {p.stat().st_mode & 0o777 for p in folders} == {0o777 & ~mask}


@pytest.mark.parametrize("other", ["algo", "env.id"])
def test_a_resume_with_another_kind_of_run_is_refused(smoke_run, tmp_path, other):
    run_dir = _copy(smoke_run, tmp_path)
    before = _snapshot(run_dir)
    spec = tmp_path / "other.yaml"
    algo, env_id = ("DQN", KWARGS_ENV_ID) if other == "algo" else ("PPO", "CartPole-v1")
    spec.write_text(
        f"name: reliability_smoke\nalgo: {algo}\nenv: {{id: {env_id}}}\n"
        "model: {hidden: [16, 16]}\nstop: {iterations: 2}\n"
    )
    result = CliRunner().invoke(app, ["train", str(spec), "--resume", str(run_dir)])
    assert result.exit_code == 2, result.output
    line = " ".join(result.output.split())
    assert f"was trained with {other} " in line and "Traceback" not in result.output
    assert _snapshot(run_dir) == before
