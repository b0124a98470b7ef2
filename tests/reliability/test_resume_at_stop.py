"""Round 4, item 1: a resumed run ends exactly where the uninterrupted run would have.

`rlp train --resume` of a run whose checkpoint already meets its `stop` (the run finished, was
killed right after its last row, or `stop` was lowered below it) trains nothing, writes nothing
and says so in one line, exit 0; a raised `stop` trains on to the new one. Before, the loop
trained one iteration before it first looked at `stop`: a finished 2-iteration run resumed
with `stop.iterations: 2` trained iteration 3. All on copies of the session's `smoke_run`
(2 iterations, a checkpoint each, `stop.iterations: 2`).
"""

import shutil
from pathlib import Path

import pytest
from loguru import logger
from typer.testing import CliRunner

from rl_platform.cli import app
from tests.reliability.support import SECRETS, TINY, read_metrics, sets


def _copy(smoke_run, where: Path) -> Path:
    shutil.copytree(smoke_run.run_dir, where)
    return where


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    """Every file of the run folder, train.log and the (empty once released) `.lock` included."""
    return {
        str(p.relative_to(run_dir)): p.read_bytes()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file()
    }


def _resume(smoke_run, run_dir: Path, *extra: str):
    args = ["train", str(smoke_run.spec_path), *sets([*TINY, *extra]), "--resume", str(run_dir)]
    return CliRunner().invoke(app, args)


def _one_line(output: str) -> str:
    assert len(output.strip().splitlines()) == 1, output
    assert "Traceback" not in output
    return " ".join(output.split())


def _last_env_steps(run_dir: Path) -> int:
    return int(read_metrics(run_dir)[-1]["env_steps"])


CASES = {
    # case -> (how the run is left before the resume, the resume's extra overrides)
    "finished": (None, []),
    "killed_after_its_last_row": ("trial_metrics.json", []),  # what `finish` writes after it
    "stop_lowered_below_it": (None, ["stop.iterations=1"]),
    "env_steps_reached": (None, ["stop.iterations=null", "stop.env_steps={steps}"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_resume_at_or_past_its_stop_trains_and_writes_nothing(case, smoke_run, tmp_path):
    run_dir = _copy(smoke_run, tmp_path / "run")
    removed, extra = CASES[case]
    if removed:
        (run_dir / removed).unlink()
    extra = [item.format(steps=_last_env_steps(run_dir)) for item in extra]
    before = _snapshot(run_dir)
    result = _resume(smoke_run, run_dir, *extra)
    assert result.exit_code == 0, result.output
    line = _one_line(result.output)
    assert "nothing to train" in line and "already reached its stop at iteration 2" in line
    assert _snapshot(run_dir) == before  # no row, checkpoint, spec.resume-N.yaml or log line
    assert [int(row["iteration"]) for row in read_metrics(run_dir)] == [1, 2]


def test_the_line_is_all_the_console_shows(smoke_run, tmp_path):
    """CliRunner sees the rich lines; loguru writes the rest of the console (`rlp` leaves its
    default handler on stderr, DEBUG and up): it must have nothing to say either."""
    run_dir = _copy(smoke_run, tmp_path / "run")
    logged: list[str] = []
    handle = logger.add(logged.append, level="DEBUG", format="{message}")
    try:
        result = _resume(smoke_run, run_dir)
    finally:
        logger.remove(handle)
    assert result.exit_code == 0, result.output
    assert "nothing to train" in _one_line(result.output)
    assert logged == []


def test_a_run_killed_between_its_last_checkpoint_and_row_gets_only_the_row_back(
    smoke_run, tmp_path
):
    run_dir = _copy(smoke_run, tmp_path / "run")
    metrics = run_dir / "metrics.jsonl"
    lines = metrics.read_text().splitlines(keepends=True)
    metrics.write_text("".join(lines[:-1]))  # the kill came before row 2 was written
    (run_dir / "trial_metrics.json").unlink()
    before = _snapshot(run_dir)
    result = _resume(smoke_run, run_dir)
    assert result.exit_code == 0, result.output
    assert "nothing to train" in _one_line(result.output)
    assert [int(row["iteration"]) for row in read_metrics(run_dir)] == [1, 2]
    after = _snapshot(run_dir)
    del before["metrics.jsonl"], after["metrics.jsonl"]
    assert after == before  # the checkpoint's own row put back, nothing else


def test_a_raised_stop_trains_on_to_the_new_one(smoke_run, ray_local, tmp_path):
    run_dir = _copy(smoke_run, tmp_path / "run")
    result = _resume(smoke_run, run_dir, "stop.iterations=3")
    assert result.exit_code == 0, result.output
    assert "run folder:" in result.output and "nothing to train" not in result.output
    assert [int(row["iteration"]) for row in read_metrics(run_dir)] == [1, 2, 3]
    assert (run_dir / "checkpoints" / "latest").read_text().strip() == "iter_000003"


def test_a_secret_in_the_run_folder_path_is_masked_on_the_console(smoke_run, tmp_path):
    """Round 4, item 6: a run folder under a path that holds one of the spec's secret values
    (`--out /mnt/<key>/runs`) is shown masked, as a spec error masks it."""
    secret = SECRETS["API_KEY"]  # a value under `env.kwargs.API_KEY` of the smoke spec
    run_dir = _copy(smoke_run, tmp_path / secret / "run")
    result = _resume(smoke_run, run_dir)
    assert result.exit_code == 0, result.output
    line = _one_line(result.output)
    assert secret not in line and f"{tmp_path}/***/run" in line
