"""Round 4, item 8: no run lost to Ray's cleanup. A job without `--out` or `logging.storage`
trains into Ray's unpacked copy of its working folder, which Ray deletes: `rlp submit` warns in
one line before it sends the job, and the run warns in its first lines, both naming `--out`.
The closing `run folder: PATH` line is one line however long the path (a script reads it).
In-process: a fake job client; the one training run uses the session Ray.
"""

from pathlib import Path
from typing import Any

import pytest
from loguru import logger
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.jobs.submit import submit_spec
from rl_platform.storage.ray_working_dir import SUBMIT_WITHOUT_OUT, in_ray_working_dir
from tests.reliability.support import CARTPOLE, TINY, sets

RAY_COPY = "ray/session_2026-11-28_11-00-00_123456_789/runtime_resources/working_dir_files"
PACKAGE = "_ray_pkg_0123456789abcdef0123456789abcdef"


class _Client:
    def submit_job(self, **job: Any) -> str:
        return job["submission_id"]


@pytest.fixture
def warnings() -> list[str]:
    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(message.record["message"]), level="WARNING")
    yield lines
    logger.remove(sink)


def test_a_path_in_rays_copy_of_a_working_folder_is_recognised(tmp_path):
    assert in_ray_working_dir(tmp_path / RAY_COPY / PACKAGE / "runs" / "x" / "20260101-000000")
    assert not in_ray_working_dir(tmp_path / "runs" / "x")
    assert not in_ray_working_dir(tmp_path / "working_dir_files" / "runs")


@pytest.mark.parametrize(
    ("spec_text", "out", "warned"),
    [
        ("name: a\nenv: {id: CartPole-v1}\n", None, True),
        ("name: a\nenv: {id: CartPole-v1}\n", "s3://bucket/runs", False),
        ("name: a\nenv: {id: CartPole-v1}\nlogging: {storage: 's3://bucket/runs'}\n", None, False),
        ("name: a\nenv: {id: only_the_cluster_has:Env}\n", None, True),  # cannot tell: warn
    ],
    ids=["no_out", "out", "logging_storage", "spec_not_loadable_here"],
)
def test_rlp_submit_warns_in_one_line_when_the_run_would_land_in_rays_copy(
    spec_text, out, warned, tmp_path, warnings
):
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_text)
    submit_spec(client=_Client(), spec=spec, out=out, working_dir=tmp_path)  # type: ignore[arg-type]
    assert (SUBMIT_WITHOUT_OUT in warnings) is warned
    assert "\n" not in SUBMIT_WITHOUT_OUT and "--out" in SUBMIT_WITHOUT_OUT


def test_a_run_in_rays_copy_warns_and_its_closing_line_is_never_wrapped(ray_local, tmp_path):
    out = tmp_path / RAY_COPY / PACKAGE / "runs"  # ~190 characters: wider than any console
    args = ["train", str(CARTPOLE), *sets([*TINY, "stop.iterations=1"]), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    [run_dir] = [p for p in out.glob("*/*") if p.is_dir()]
    assert len(f"run folder: {run_dir}") > 160
    assert f"run folder: {run_dir}" in result.output.splitlines()  # whole, on one line
    logged = (run_dir / "train.log").read_text()
    [line] = [line for line in logged.splitlines() if "unpacked copy" in line]
    assert "WARNING" in line and str(run_dir) in line and "--out" in line


def test_a_run_outside_rays_copy_does_not_warn(smoke_run):
    assert "unpacked copy" not in (Path(smoke_run.run_dir) / "train.log").read_text()
