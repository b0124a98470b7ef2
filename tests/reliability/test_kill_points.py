"""SIGKILL at the exact moments a run writes its files, then `--resume`: every file of the run is
what an uninterrupted run of the same spec writes (rows, iterations, env steps, evaluation rows,
checkpoints), perf/* and measured values aside (episodes in flight at the kill are lost, so
returns differ; what was written, and when, may not).

Each moment is reached by `kill_point_child.py`, which freezes `rlp train` there for the test to
SIGKILL it and its Ray; the killed runs go beside the suite (tests/background.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from tests.background import Background, Scenario
from tests.reliability.support import (
    CARTPOLE,
    REPO,
    TINY,
    TrainProcess,
    child_env,
    only_run_dir,
    reaped,
    sets,
    wait_for,
)

RUN = [
    *TINY,
    "stop.iterations=6",
    "checkpoint.every_iterations=1",
    "checkpoint.keep_last=10",
    "evaluation.every_env_steps=400",
    "evaluation.episodes=2",
    "evaluation.parallel=2",
]
ARGS = ["train", str(CARTPOLE), "--profile", "smoke", *sets(RUN)]
MOMENTS = {
    "inside_checkpoint:1": "the first checkpoint's files are written, its rlp_state.json is not",
    "before_latest:2": "checkpoint 2 is complete, `latest` still names checkpoint 1",
    "before_evaluation_row:1": "the evaluated checkpoint is saved, its evaluation row is not",
    "torn_metrics_row:4": "half of row 4 is written",
}


def _killed_at(moment: str):
    def run(folder: Path, env: dict[str, str]) -> Path:
        frozen = folder / "frozen"
        extra = {"RLP_TEST_FREEZE_AT": moment, "RLP_TEST_FROZEN_FILE": str(frozen)}
        out = folder / "runs"
        log = folder / "child.log"
        with log.open("wb") as handle:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.reliability.kill_point_child",
                    *ARGS,
                    "--out",
                    str(out),
                ],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=child_env(env, **extra),
                cwd=REPO,
                start_new_session=True,
            )
        process = TrainProcess(proc, out, log)
        with reaped(process):
            wait_for(
                lambda: frozen.exists() or proc.poll() is not None,
                timeout_s=300,
                what=f"the run to reach {moment}",
            )
            assert frozen.exists(), process.output[-3000:]
            process.kill_tree()
        return only_run_dir(out)

    return Scenario.run_once(f"kill_point_{moment.replace(':', '_')}", run)


SCENARIOS = {moment: _killed_at(moment) for moment in MOMENTS}
BACKGROUND = list(SCENARIOS.values())


def _rows(path: Path) -> list[tuple]:
    """Each row as (iteration, env_steps, checkpoint, its keys) without perf/* and values."""
    rows = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        row = json.loads(line)
        keys = tuple(sorted(k for k in row if not k.startswith("perf/")))
        rows.append((row["iteration"], row.get("env_steps"), row.get("checkpoint"), keys))
    return rows


def _files(run_dir: Path) -> dict:
    store = CheckpointStore(run_dir / "checkpoints")
    checkpoints = {}
    for folder in store.complete_checkpoints():
        meta = load_checkpoint(folder).meta  # every checkpoint verifies
        checkpoints[folder.name] = (meta["iteration"], meta["env_steps"])
    return {
        "metrics": _rows(run_dir / "metrics.jsonl"),
        "evaluation": _rows(run_dir / "evaluation.jsonl"),
        "checkpoints": checkpoints,
        "latest": store.latest().name if store.latest() else None,
        "leftovers": sorted(p.name for p in (run_dir / "checkpoints").glob(".*")),
    }


@pytest.fixture(scope="module")
def uninterrupted(ray_local, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("uninterrupted")
    result = CliRunner().invoke(app, [*ARGS, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return _files(only_run_dir(out))


@pytest.mark.parametrize("moment", [m for m in MOMENTS if m != "inside_checkpoint:1"])
def test_a_run_killed_at_a_write_resumes_to_the_uninterrupted_files(
    moment, background: Background, uninterrupted, ray_local
) -> None:
    run_dir = background.result(SCENARIOS[moment])
    result = CliRunner().invoke(app, [*ARGS, "--resume", str(run_dir)])
    assert result.exit_code == 0, f"{MOMENTS[moment]}: {result.output}"
    files = _files(run_dir)
    for name, expected in uninterrupted.items():
        if name in ("metrics", "evaluation"):
            for got, want in zip(files[name], expected, strict=False):
                assert got == want, f"{MOMENTS[moment]}: {name} {set(got[3]) ^ set(want[3])}"
        assert files[name] == expected, f"{MOMENTS[moment]}: {name}"


def test_a_run_killed_inside_its_first_checkpoint_has_no_row_and_says_so_on_resume(
    background: Background,
) -> None:
    run_dir = background.result(SCENARIOS["inside_checkpoint:1"])
    assert _rows(run_dir / "metrics.jsonl") == []  # no row names an iteration no checkpoint holds
    assert CheckpointStore(run_dir / "checkpoints").latest() is None
    result = CliRunner().invoke(app, [*ARGS, "--resume", str(run_dir)])
    assert result.exit_code == 2 and "no complete checkpoint to resume from" in result.output
