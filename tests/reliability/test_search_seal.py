"""Check 17: `rlp search --resume` never unpickles a file this user's `rlp search` did not seal.

A payload pickle planted in a search folder (Tune's `tuner.pkl`, searcher state, any `*.pkl`)
must not run: without a seal the resume is refused, with a seal the sealed copies replace the
planted files, and a sealed copy that was edited is refused. None of these start Ray.
"""

import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.search import seal as seal_module
from rl_platform.search.seal import QUARANTINE_DIR, SEALED_DIR, seal, tune_state_files, unseal
from rl_platform.storage.run_lock import LOCK_FILE, RunLock
from tests.reliability.support import child_env

SPEC = """\
name: sealed
env: {id: CartPole-v1}
stop: {env_steps: 1000}
search:
  params: {training.lr: {loguniform: [1.0e-4, 1.0e-3]}}
  num_samples: 2
"""


class _Payload:
    """Unpickling this touches `marker`: the proof that a planted file ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.fixture(autouse=True)
def _own_seal_key(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def _search_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "search" / "sealed" / "20260101-000000"
    (folder / "trial_0001").mkdir(parents=True)
    (folder / "spec.yaml").write_text(SPEC)
    (folder / "tuner.pkl").write_bytes(pickle.dumps({"legit": True}))
    (folder / "experiment_state-2026.json").write_text('{"trials": []}')
    return folder


def _plant(path: Path, marker: Path) -> None:
    path.write_bytes(pickle.dumps(_Payload(marker)))


def test_resume_of_an_unsealed_folder_is_refused_and_runs_nothing(tmp_path):
    folder, marker = _search_folder(tmp_path), tmp_path / "pwned"
    _plant(folder / "tuner.pkl", marker)
    result = CliRunner().invoke(app, ["search", "--resume", str(folder)])
    assert result.exit_code == 2, result.output
    assert "no sealed search state" in result.output and "Traceback" not in result.output
    assert not marker.exists()
    assert (folder / "tuner.pkl").is_file()  # nothing of the user's folder was moved or lost


def test_sealed_copies_replace_planted_files_which_are_set_aside(tmp_path):
    folder, marker = _search_folder(tmp_path), tmp_path / "pwned"
    seal(folder, [folder / "tuner.pkl", folder / "experiment_state-2026.json"])
    _plant(folder / "tuner.pkl", marker)
    _plant(folder / "searcher-state-2026.pkl", marker)  # a state file Tune would also read
    _plant(folder / "trial_0001" / "params.pkl", marker)
    unseal(folder)
    assert pickle.loads((folder / "tuner.pkl").read_bytes()) == {"legit": True}
    assert not (folder / "searcher-state-2026.pkl").exists()
    assert not (folder / "trial_0001" / "params.pkl").exists()
    aside = folder / QUARANTINE_DIR
    assert (aside / "tuner.pkl").is_file() and (aside / "trial_0001" / "params.pkl").is_file()
    assert not marker.exists()


@pytest.mark.parametrize("tamper", ["sealed_copy", "manifest", "other_users_key"])
def test_a_tampered_seal_is_refused_before_anything_moves(tamper, tmp_path, monkeypatch):
    folder, marker = _search_folder(tmp_path), tmp_path / "pwned"
    seal(folder, [folder / "tuner.pkl"])
    if tamper == "sealed_copy":
        _plant(folder / SEALED_DIR / "tuner.pkl", marker)
    elif tamper == "manifest":
        manifest = folder / SEALED_DIR / "manifest.json"
        manifest.write_text(manifest.read_text().replace('"tuner.pkl": "', '"tuner.pkl": "0'))
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "someone_else"))
    before = sorted(p.name for p in folder.iterdir())
    with pytest.raises(UserError, match="seal"):
        unseal(folder)
    assert sorted(p.name for p in folder.iterdir()) == before
    assert not marker.exists()


def test_the_seal_key_is_private_to_its_user(tmp_path):
    folder = _search_folder(tmp_path)
    seal(folder, [folder / "tuner.pkl"])
    assert seal_module.seal_key_path().stat().st_mode & 0o777 == 0o600


HOLD_LOCK = """
import sys, time
from pathlib import Path
from rl_platform.storage.run_lock import RunLock
with RunLock(Path(sys.argv[1])):
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_second_resume_of_one_search_folder_is_refused_naming_the_holder(tmp_path, monkeypatch):
    """Issue #59 E: two `rlp search --resume` of one folder at once: the second would set the
    first one's files aside (`unseal`) and run its trials again. It is refused in one line
    naming the first one's pid, before anything in the folder moves."""

    def never(*_: object, **__: object) -> None:
        raise AssertionError("a second resume of a held search folder started Ray")

    monkeypatch.setattr("rl_platform.search.tuner.ensure_ray", never)
    folder = _search_folder(tmp_path)
    seal(folder, [folder / "tuner.pkl"])
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(folder)],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = _files(folder)
        result = CliRunner().invoke(app, ["search", "--resume", str(folder)])
        assert result.exit_code == 2, result.output
        line = " ".join(result.output.split())
        assert f"is in use by process {holder.pid}" in line, line
        assert "Traceback" not in result.output
        assert _files(folder) == before and not (folder / QUARANTINE_DIR).exists()
    finally:
        holder.kill()
        holder.wait()


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_the_resumers_own_lock_stays_in_place_through_unseal(tmp_path):
    """`rlp search --resume` holds the folder's `.lock` while it unseals: the lock file is not
    Tune state, so it is neither sealed nor moved aside nor replaced (a third command would
    then lock a new file)."""
    folder = _search_folder(tmp_path)
    with RunLock(folder):
        lock_inode = (folder / LOCK_FILE).stat().st_ino
        seal(folder, tune_state_files(folder))
        unseal(folder)
        assert (folder / LOCK_FILE).stat().st_ino == lock_inode
    assert not (folder / SEALED_DIR / LOCK_FILE).exists()
    assert not list((folder / QUARANTINE_DIR).rglob(LOCK_FILE))
