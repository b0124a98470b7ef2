"""A full disk names what it could not write, and leaves no run folder holding only `.lock`
(#59, round 5). The disk is filled by patching the write to raise `OSError(ENOSPC)`, as a full
disk raises it: from a write or fsync on an open file, naming no file. `rlp train` and
`rlp pull` run in-process without Ray; `rlp export` reads the session's tiny run.
"""

import errno
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.storage import run_pull
from rl_platform.storage.evaluation_rows import append_evaluation_row, evaluation_path
from rl_platform.storage.metrics_rows import MetricsLog
from rl_platform.utils import atomic
from tests.reliability.support import CARTPOLE, STORED_RUN_KEYS, stored_runs

FULL = "no space left on device"


def _full_disk_error() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _FullUnder:
    """`os.fsync` / `os.pwrite` that report a full disk for files under `root`."""

    def __init__(self, root: Path, real) -> None:
        self.root, self.real, self.hits = str(root.resolve()), real, 0

    def __call__(self, fd: int, *args):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(self.root):
            self.hits += 1
            raise _full_disk_error()
        return self.real(fd, *args)


def _one_line_naming(result, path: Path) -> None:
    assert result.exit_code == 2, result.output
    output = result.output.replace("\n", "")
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert f"{path}: {FULL}" in output, result.output


@pytest.mark.parametrize("write", ["lock", "spec"])
def test_rlp_train_onto_a_full_disk_names_the_file_and_leaves_no_run_folder(
    write, tmp_path, monkeypatch
):
    out = tmp_path / "runs"
    call = "pwrite" if write == "lock" else "fsync"
    full = _FullUnder(tmp_path, getattr(os, call))
    monkeypatch.setattr(atomic.os, call, full)  # the `os` module every writer uses
    result = CliRunner().invoke(app, ["train", str(CARTPOLE), "-p", "smoke", "--out", str(out)])
    monkeypatch.undo()
    assert full.hits >= 1
    (stamp,) = [line for line in result.output.split() if "/cartpole_ppo/" in line]
    run_dir = Path(stamp.split(":")[0]).parent
    file = {"lock": ".lock", "spec": "spec.yaml"}[write]
    _one_line_naming(result, run_dir / file)
    assert list((out / "cartpole_ppo").iterdir()) == []  # no folder that holds only `.lock`


def test_rlp_export_onto_a_full_disk_names_the_file(smoke_run, tmp_path, monkeypatch):
    target = tmp_path / "policy.safetensors"
    monkeypatch.setattr(atomic.os, "fsync", _FullUnder(tmp_path, os.fsync))
    result = CliRunner().invoke(app, ["export", str(smoke_run.run_dir), str(target)])
    monkeypatch.undo()
    _one_line_naming(result, target)
    assert list(tmp_path.iterdir()) == []


def test_rlp_pull_onto_a_full_disk_names_the_folder_and_keeps_nothing(tmp_path, monkeypatch):
    bucket = stored_runs(tmp_path)
    dest = tmp_path / "pulled"
    download = run_pull._download

    def download_onto_a_full_disk(*args) -> None:
        download(*args)
        raise _full_disk_error()  # as `out.write(chunk)` raises it

    monkeypatch.setattr(run_pull, "_download", download_onto_a_full_disk)
    result = CliRunner().invoke(app, ["pull", str(bucket / STORED_RUN_KEYS[0]), "--to", str(dest)])
    _one_line_naming(result, dest)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bucket", "runs"]  # no temp left


class _FullFile:
    """An open file on a full disk: every write raises, naming no file."""

    def write(self, text: str) -> int:
        raise _full_disk_error()

    def close(self) -> None:
        pass

    def __enter__(self) -> "_FullFile":
        return self

    def __exit__(self, *exc_info) -> None:
        pass


def test_rows_appended_onto_a_full_disk_name_their_file(tmp_path, monkeypatch):
    log = MetricsLog(tmp_path)
    monkeypatch.setattr(log, "_file", _FullFile())
    with pytest.raises(OSError) as info:
        log.append({"iteration": 1})
    assert (info.value.errno, info.value.filename) == (errno.ENOSPC, str(log.path))
    monkeypatch.setattr(Path, "open", lambda *args, **kwargs: _FullFile())
    with pytest.raises(OSError) as info:
        append_evaluation_row(tmp_path, {"iteration": 1})
    assert (info.value.errno, info.value.filename) == (errno.ENOSPC, str(evaluation_path(tmp_path)))
