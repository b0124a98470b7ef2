"""A run folder cannot be turned against its owner: a symbolic link inside it (`.lock`,
`train.log`, `metrics.jsonl`, a checkpoint folder) is refused before `--resume` or `rlp league`
writes or reads through it, and the file it points to is left as it was."""

import os
import shutil

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.storage.run_dir import refuse_links
from tests.reliability.support import TINY, sets

LINKED = [".lock", "train.log", "metrics.jsonl", "checkpoints/iter_000002"]


@pytest.mark.parametrize("name", LINKED)
def test_resume_refuses_a_run_folder_with_a_link_inside(smoke_run, tmp_path, name) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    victim = tmp_path / "outside"
    if name.startswith("checkpoints/"):
        shutil.copytree(run_dir / name, victim)  # a checkpoint copied out, then linked back
        shutil.rmtree(run_dir / name)
    else:
        victim.write_text("someone else's file\n")
        (run_dir / name).unlink(missing_ok=True)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in [victim, *victim.rglob("*")])
    os.symlink(victim, run_dir / name)

    args = ["train", str(run_dir / "spec.yaml"), *sets(TINY), "--resume", str(run_dir)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert (
        "is a symbolic link out of the run folder" in result.output
        and name.split("/")[-1] in result.output
    )
    assert "Traceback" not in result.output
    assert sorted((p.name, p.stat().st_mtime_ns) for p in [victim, *victim.rglob("*")]) == before
    if not name.startswith("checkpoints/"):
        assert victim.read_text() == "someone else's file\n"


def test_links_that_stay_inside_the_run_folder_pass(smoke_run, tmp_path) -> None:
    """W&B keeps `wandb/latest-run` as a link to a folder beside it, and its debug logs as
    links into its own cache: W&B's folder is W&B's; the folder itself may not lead out."""
    run_dir = tmp_path / "run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    (run_dir / "wandb" / "offline-run-1").mkdir(parents=True)
    os.symlink("offline-run-1", run_dir / "wandb" / "latest-run")
    os.symlink(tmp_path, run_dir / "wandb" / "offline-run-1" / "debug-core.log")  # W&B's own
    refuse_links(run_dir)  # raises on a link out of the folder
    (run_dir / "wandb").rename(run_dir / "wandb-moved")
    os.symlink(tmp_path, run_dir / "wandb")  # but the W&B folder itself leading out: refused
    with pytest.raises(UserError, match="wandb is a symbolic link out of the run folder"):
        refuse_links(run_dir)
