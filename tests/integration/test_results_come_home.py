"""Results come home: a CartPole smoke run trained with `--out file://BUCKET` (a local folder
standing in for a bucket) is stored with its manifest, pulled back by URI and by job id
byte for byte, and the pulled copy resumes."""

import json
from pathlib import Path

from rl_platform import load_spec, train
from tests.conftest import EXPERIMENTS
from tests.integration.cli_support import invoke_rlp
from tests.reliability.support import TINY, sets

SPEC = EXPERIMENTS / "cartpole_ppo.yaml"
JOB_ID = "rlp_home_0123abcd"
SETTINGS = [*TINY, "logging.tensorboard=true", "stop.iterations=2"]


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_stored_run_comes_home_by_uri_and_job_id_and_resumes(ray_local, tmp_path, monkeypatch):
    bucket = tmp_path / "bucket"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("RLP_JOB_ID", JOB_ID)  # what `rlp submit` sets in the job's env
    trained = invoke_rlp(
        "train", str(SPEC), "-p", "smoke", *sets(SETTINGS), "--out", f"file://{bucket}"
    )
    stored_at = trained.stderr.split("stored at: ")[1].split()[0]
    [local] = (tmp_path / "runs" / "cartpole_ppo").iterdir()  # the staging folder
    assert stored_at == f"file://{bucket}/cartpole_ppo/{local.name}"
    manifest = json.loads((bucket / "cartpole_ppo" / local.name / "manifest.json").read_text())
    assert manifest["final"] and manifest["job_id"] == JOB_ID
    assert {"checkpoints/latest", "checkpoints/iter_000002/rlp_state.json", "spec.yaml"} <= set(
        manifest["files"]
    )
    assert any(name.startswith("tensorboard/") for name in manifest["files"])

    expected = _files(bucket / "cartpole_ppo" / local.name)
    assert set(expected) == {*manifest["files"], "manifest.json"}
    for name, data in _files(local).items():  # train.log has grown by the upload's own line
        assert name not in expected or name == "train.log" or expected[name] == data, name
    invoke_rlp("pull", stored_at, "--to", "by_uri")
    assert _files(tmp_path / "by_uri") == expected

    # By job id, the default destination is runs/NAME/STAMP: here the staging folder itself.
    refused = invoke_rlp("pull", JOB_ID, "--from", f"file://{bucket}", code=2)
    assert "not empty; pass --force" in refused.stderr
    invoke_rlp("pull", JOB_ID, "--from", f"file://{bucket}", "--to", "by_job")
    assert _files(tmp_path / "by_job") == expected

    spec = load_spec(SPEC, profile="smoke", overrides=[*TINY, "stop.iterations=3"])
    resumed = train(spec, resume=tmp_path / "by_uri")
    assert resumed.iterations == 3
    assert (tmp_path / "by_uri" / "checkpoints" / "latest").read_text().strip() == "iter_000003"
