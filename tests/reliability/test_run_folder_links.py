"""A run folder cannot be turned against its owner: a symbolic link inside it (`.lock`,
`train.log`, `metrics.jsonl`, a checkpoint folder) is refused before `--resume` or `rlp league`
writes or reads through it, and the file it points to is left as it was. Verbs that only read a
checkpoint (`rlp eval`, `rlp export`, the checkpoint `rlp league add` takes) still load one
linked from another run, with only the "latest is stale" warning (round 4, item 7)."""

import os
import pickle
import shutil

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.search.seal import seal
from rl_platform.storage.run_dir import refuse_links
from tests.reliability.support import TINY, league_run_folder, sets

LEAGUE_LINKED = [".lock", "league/league.json", "league", "checkpoints/iter_000001"]

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


def _link_out(run_dir, name: str, victim) -> list[tuple[str, int]]:
    """Move `run_dir/name` to `victim` and link it back; what `victim` holds, to compare."""
    (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
    if (run_dir / name).exists():
        shutil.move(run_dir / name, victim)
    else:
        victim.write_text("someone else's file\n")
    os.symlink(victim, run_dir / name)
    return sorted((p.name, p.stat().st_mtime_ns) for p in [victim, *victim.rglob("*")])


@pytest.mark.parametrize("name", LEAGUE_LINKED)
@pytest.mark.parametrize("verb", ["add", "tournament"])
def test_rlp_league_refuses_a_run_folder_with_a_link_inside(tmp_path, verb, name) -> None:
    run_dir = league_run_folder(tmp_path)
    source = tmp_path / "source"  # a checkpoint to add, outside the league's run
    shutil.copytree(run_dir / "checkpoints" / "iter_000001", source)
    victim = tmp_path / "outside"
    before = _link_out(run_dir, name, victim)
    if verb == "add":
        args = ["league", "add", str(run_dir), str(source), "--id", "frozen_a"]
    else:
        args = ["league", "tournament", str(run_dir), "--games", "1", "-m", "based"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert "is a symbolic link out of the run folder" in flat and name.split("/")[-1] in flat
    assert "Traceback" not in result.output and "added" not in result.output
    assert sorted((p.name, p.stat().st_mtime_ns) for p in [victim, *victim.rglob("*")]) == before


def _run_linked_to(smoke_run, tmp_path, *, whole_folder: bool):
    """A copy of the smoke run whose newest checkpoint (or whole `checkpoints/`) is a link to
    the smoke run's own."""
    run_dir = tmp_path / "linked_run"
    shutil.copytree(smoke_run.run_dir, run_dir)
    theirs = smoke_run.run_dir / "checkpoints"
    name = "checkpoints" if whole_folder else "checkpoints/iter_000002"
    shutil.rmtree(run_dir / name)
    os.symlink(theirs if whole_folder else theirs / "iter_000002", run_dir / name)
    return run_dir


@pytest.mark.parametrize("whole_folder", [False, True], ids=["checkpoint", "checkpoints"])
def test_verbs_that_read_a_checkpoint_load_one_linked_from_another_run(
    smoke_run, tmp_path, whole_folder
) -> None:
    run_dir = _run_linked_to(smoke_run, tmp_path, whole_folder=whole_folder)
    out = tmp_path / "policy.safetensors"
    exported = CliRunner().invoke(app, ["export", str(run_dir), str(out)])
    assert exported.exit_code == 0 and out.is_file(), exported.output
    args = ["eval", f"checkpoint://{run_dir}", "-n", "1", "--max-steps", "5", "--json"]
    evaluated = CliRunner().invoke(app, args)
    assert evaluated.exit_code == 0, evaluated.output
    assert '"episodes": 1' in evaluated.stdout
    for result in (exported, evaluated):
        assert "error" not in result.output and "symbolic link" not in result.output


def test_rlp_league_add_takes_a_checkpoint_linked_from_elsewhere(tmp_path) -> None:
    """The checkpoint `rlp league add` reads may be a link: only the league's run is written."""
    run_dir = league_run_folder(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(run_dir / "checkpoints" / "iter_000001", elsewhere)
    os.symlink(elsewhere, tmp_path / "linked_checkpoint")
    args = ["league", "add", str(run_dir), str(tmp_path / "linked_checkpoint"), "--id", "frozen_a"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0 and "added frozen_a" in result.output, result.output


SEARCH_SPEC = """\
name: sealed
env: {id: CartPole-v1}
stop: {env_steps: 1000}
search:
  params: {training.lr: {loguniform: [1.0e-4, 1.0e-3]}}
  num_samples: 2
"""


@pytest.mark.parametrize("name", ["trial_0002", ".rlp-unsealed", "trial_0001/params.pkl"])
def test_search_resume_refuses_a_search_folder_with_a_link_inside(tmp_path, monkeypatch, name):
    """Once the set-aside of unsealed `*.pkl` files followed a trial folder linked out of the
    search and moved someone else's files away."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # this test's seal key
    folder = tmp_path / "search" / "sealed" / "20260101-000000"
    (folder / "trial_0001").mkdir(parents=True)
    (folder / "spec.yaml").write_text(SEARCH_SPEC)
    (folder / "tuner.pkl").write_bytes(pickle.dumps({"legit": True}))
    seal(folder, [folder / "tuner.pkl"])
    victim = tmp_path / "outside"
    victim.mkdir()
    (victim / "params.pkl").write_bytes(pickle.dumps({"theirs": True}))
    os.symlink(victim / "params.pkl" if name.endswith(".pkl") else victim, folder / name)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in victim.rglob("*"))
    result = CliRunner().invoke(app, ["search", "--resume", str(folder)])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert "is a symbolic link out of the run folder" in flat and name.split("/")[-1] in flat
    assert sorted((p.name, p.stat().st_mtime_ns) for p in victim.rglob("*")) == before
    assert (folder / "tuner.pkl").is_file()  # nothing set aside


def test_a_search_folder_whose_trials_hold_wandb_links_passes(tmp_path) -> None:
    """Each trial's run keeps W&B's folder, whose debug logs link to W&B's own cache."""
    trial_run = tmp_path / "search" / "trial_0001" / "run"
    (trial_run / "wandb" / "offline-run-1").mkdir(parents=True)
    os.symlink(tmp_path, trial_run / "wandb" / "offline-run-1" / "debug-core.log")
    refuse_links(tmp_path / "search")
