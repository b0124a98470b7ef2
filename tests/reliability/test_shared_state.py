"""Round 3, item 7: other people's data is never lost.

`rlp pull --force` replaces one run folder and nothing else (never the stored run, the storage
around it, or a folder of other runs); `rlp league add` / `tournament` write a league only under
its run's lock, so a run that trains it refuses them with one line instead of writing over the
added member at its next iteration. All in-process, on fake run folders: no Ray.
"""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.storage.run_lock import RunLock
from tests.reliability.support import STORED_RUN_KEYS as KEYS
from tests.reliability.support import league_run_folder
from tests.reliability.support import stored_runs as _stored_runs


def _files(folder: Path) -> dict[str, bytes]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files}


def _pull(*args: str):
    return CliRunner().invoke(app, ["pull", *args])


def _refused(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    for fragment in fragments:
        assert fragment in result.output.replace("\n", ""), result.output


@pytest.mark.parametrize(
    "where", ["storage_root", "the_run_itself", "inside_the_run", "a_folder_of_runs"]
)
def test_pull_force_never_deletes_the_stored_run_or_other_runs(where, tmp_path):
    bucket = _stored_runs(tmp_path)
    source = bucket / KEYS[0]
    dest = {
        "storage_root": bucket,
        "the_run_itself": source,
        "inside_the_run": source / "checkpoints",
        "a_folder_of_runs": tmp_path / "runs",
    }[where]
    before = {"bucket": _files(bucket), "runs": _files(tmp_path / "runs")}
    result = _pull(str(source), "--to", str(dest), "--force")
    _refused(result, "--to")
    assert {"bucket": _files(bucket), "runs": _files(tmp_path / "runs")} == before


def test_pull_force_replaces_a_run_folder_but_no_other_folder(tmp_path):
    bucket = _stored_runs(tmp_path)
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("keep")
    _refused(_pull(str(bucket / KEYS[0]), "--to", str(mine), "--force"), "not a run folder")
    assert (mine / "todo.txt").read_text() == "keep"

    old_run = tmp_path / "old_run"
    old_run.mkdir()
    (old_run / "spec.yaml").write_text("name: old\n")
    result = _pull(str(bucket / KEYS[0]), "--to", str(old_run), "--force")
    assert result.exit_code == 0, result.output
    assert (old_run / "manifest.json").is_file() and (old_run / "metrics.jsonl").is_file()
    with RunLock(old_run):  # a run folder that trains is never replaced under it
        _refused(_pull(str(bucket / KEYS[1]), "--to", str(old_run), "--force"), "in use")


def _league_add(run_dir: Path, member_id: str):
    checkpoint = run_dir / "checkpoints" / "iter_000001"
    args = ["league", "add", str(run_dir), str(checkpoint), "--id", member_id]
    return CliRunner().invoke(app, args)


def _member_ids(run_dir: Path) -> list[str]:
    manifest = json.loads((run_dir / "league" / "league.json").read_text())
    return [member["id"] for member in manifest["members"]]


def test_league_add_while_the_run_trains_is_refused_and_never_said_added(tmp_path):
    run_dir = league_run_folder(tmp_path)
    manifest = run_dir / "league" / "league.json"
    before = manifest.read_bytes()
    with RunLock(run_dir):  # what `rlp train` holds for the whole run
        result = _league_add(run_dir, "frozen_a")
        _refused(result, "is training", "rlp train --resume")
        assert "added" not in result.output and manifest.read_bytes() == before
        assert not list((run_dir / "league").glob("weights/frozen_a*"))
    result = _league_add(run_dir, "frozen_a")  # once it stopped, the add is kept
    assert result.exit_code == 0 and "added frozen_a" in result.output, result.output
    assert "frozen_a" in _member_ids(run_dir)
    with RunLock(run_dir):  # the add let go of the lock: `rlp train --resume` can take it
        pass


def test_a_tournament_to_an_unusable_out_path_fails_before_any_game_or_rating(tmp_path):
    run_dir = league_run_folder(tmp_path)
    manifest = run_dir / "league" / "league.json"
    (tmp_path / "a_file").write_text("x")
    before = manifest.read_bytes()
    for out in (tmp_path / "a_file" / "map.png", tmp_path / "map.jpeg", tmp_path):
        args = ["league", "tournament", str(run_dir), "--games", "1", "--out", str(out)]
        result = CliRunner().invoke(app, [*args, "-m", "based", "-m", "constant"])
        assert manifest.read_bytes() == before  # no new ratings
        _refused(result, "--out")
        assert "games per pair" not in result.output  # refused before playing
