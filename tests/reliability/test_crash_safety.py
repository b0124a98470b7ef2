"""Checks 5 and 6: a SIGKILL or a full disk in the middle of a save never damages `latest`.

The writers run in child processes so that a real SIGKILL (no cleanup code runs) and a real
file-size limit (RLIMIT_FSIZE: the kernel stops the write part-way) hit them.
"""

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from rl_platform.base.errors import UserError
from rl_platform.league import League, LeagueSpec
from rl_platform.league.pool import MANIFEST, WEIGHTS_DIR
from rl_platform.storage.checkpoints import CheckpointStore, CheckpointWriteError, load_checkpoint
from rl_platform.utils import atomic
from tests.reliability.support import REPO, child_env, wait_for

# A child that saves checkpoint 1, then hangs inside the save of checkpoint 2 at `STAGE`.
KILL_MID_SAVE = textwrap.dedent(
    """
    import os, sys, tempfile, time
    from pathlib import Path
    import numpy as np
    from rl_platform.storage import checkpoints
    from rl_platform.utils import state_codec

    root, stage = Path(sys.argv[1]), sys.argv[2]
    store = checkpoints.CheckpointStore(root, keep_last=3)

    def tree(value):
        return {"w": np.full((256, 256), value, dtype=np.float32), "step": int(value)}

    store.save(iteration=1, parts={"algorithm": tree(1.0)}, meta={"env_steps": 10})

    def hang():
        print("HANGING", flush=True)
        time.sleep(600)

    if stage == "arrays":  # half of the arrays file is on disk when the kill comes
        def slow_write(path, data):
            fd, tmp = tempfile.mkstemp(prefix=f".{Path(path).name}.", suffix=".tmp",
                                       dir=Path(path).parent)
            os.write(fd, data[: len(data) // 2])
            os.fsync(fd)
            hang()
        state_codec.write_bytes_atomic = slow_write
    elif stage == "pointer":  # folder complete and renamed, `latest` half rewritten
        def slow_pointer(path, text):
            fd, tmp = tempfile.mkstemp(prefix=".latest.", suffix=".tmp", dir=root)
            os.write(fd, text[:4].encode())
            os.fsync(fd)
            hang()
        checkpoints.write_text_atomic = slow_pointer
    store.save(iteration=2, parts={"algorithm": tree(2.0)}, meta={"env_steps": 20})
    print("UNREACHABLE", flush=True)
    """
)


def _tree(value: float) -> dict:
    return {"w": np.full((256, 256), value, dtype=np.float32), "step": int(value)}


def _run_until_hanging_then_sigkill(script: str, args: list[str], tmp_path: Path) -> str:
    log = tmp_path / "child.log"
    with log.open("wb") as handle:
        proc = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=child_env(),
            cwd=REPO,
        )
    try:
        wait_for(
            lambda: "HANGING" in log.read_text() or proc.poll() is not None,
            timeout_s=120,
            what="the child to reach the slow write",
        )
        assert proc.poll() is None, f"child exited early:\n{log.read_text()}"
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    output = log.read_text()
    assert "UNREACHABLE" not in output
    return output


@pytest.mark.parametrize("stage", ["arrays", "pointer"])
def test_sigkill_mid_save_keeps_the_previous_checkpoint_latest(stage, tmp_path):
    root = tmp_path / "checkpoints"
    _run_until_hanging_then_sigkill(KILL_MID_SAVE, [str(root), stage], tmp_path)

    store = CheckpointStore(root, keep_last=3)
    assert (root / "latest").read_text() == "iter_000001\n"
    assert store.latest() == root / "iter_000001"
    loaded = load_checkpoint(store.latest())
    assert loaded.meta["iteration"] == 1 and loaded.meta["env_steps"] == 10
    np.testing.assert_array_equal(loaded.parts["algorithm"]["w"], _tree(1.0)["w"])
    if stage == "arrays":
        assert not (root / "iter_000002").exists()
        stale = list(root.glob(".iter_000002.*.tmp"))
        assert len(stale) == 1 and any(stale[0].iterdir()), "expected the half-written folder"
    else:  # the folder itself was complete and renamed; only the pointer write was cut
        assert store.complete_checkpoints() == [root / "iter_000001", root / "iter_000002"]
        assert len(list(root.glob(".latest.*.tmp"))) == 1

    # The next save (e.g. by the resumed run) publishes and cleans the leftovers up.
    store.save(iteration=3, parts={"algorithm": _tree(3.0)}, meta={"env_steps": 30})
    assert store.latest() == root / "iter_000003"
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == []
    assert load_checkpoint(store.latest()).meta["iteration"] == 3


# ----- disk full -------------------------------------------------------------------------------
# The child saves a small checkpoint / league snapshot, then lowers RLIMIT_FSIZE below the size
# of the next one, so the kernel refuses the write part-way (EFBIG, like a full disk). SIGXFSZ
# is ignored so the write fails with an error instead of killing the process.
DISK_FULL = textwrap.dedent(
    """
    import json, resource, signal, sys
    from pathlib import Path
    import numpy as np, torch

    target, root = sys.argv[1], Path(sys.argv[2])
    limit = 256 * 1024

    def fill_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    def report(exc):
        print(json.dumps({"type": type(exc).__name__, "errno": getattr(exc, "errno", None),
                          "message": str(exc)}))

    if target == "checkpoint":
        from rl_platform.storage.checkpoints import CheckpointStore
        store = CheckpointStore(root, keep_last=3)
        small = {"w": np.ones((8, 8), dtype=np.float32)}
        store.save(iteration=1, parts={"algorithm": small}, meta={"env_steps": 1})
        fill_disk()
        big = {"w": np.full((512, 512), 2.0, dtype=np.float32)}  # 1 MiB > limit
        try:
            store.save(iteration=2, parts={"algorithm": big}, meta={"env_steps": 2})
        except Exception as exc:
            report(exc)
    else:
        from rl_platform.league import League, LeagueSpec
        league = League(spec=LeagueSpec(), storage=root, seed=0)
        league.add_snapshot(learner_id="main", weights={"w": torch.ones(8, 8)}, env_steps=1)
        fill_disk()
        try:
            league.add_snapshot(learner_id="main", weights={"w": torch.ones(512, 512)},
                                env_steps=2)
        except Exception as exc:
            report(exc)
    """
)


def _run_disk_full(target: str, root: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", DISK_FULL, target, str(root)],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=REPO,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 1, f"the second save did not fail:\n{proc.stdout}{proc.stderr}"
    return json.loads(lines[0])


def test_file_size_limit_during_checkpoint_save_is_a_clear_error_and_keeps_latest(tmp_path):
    root = tmp_path / "checkpoints"
    error = _run_disk_full("checkpoint", root)
    assert error["type"] == "CheckpointWriteError" and error["errno"] == errno.EFBIG
    assert "could not write checkpoint iter_000002" in error["message"]
    assert "previous checkpoint (iter_000001) is still `latest`" in error["message"]
    store = CheckpointStore(root)
    assert store.latest() == root / "iter_000001"
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001", "latest"]
    assert load_checkpoint(store.latest()).meta["iteration"] == 1


def test_file_size_limit_during_league_snapshot_registers_nothing(tmp_path):
    root = tmp_path / "league"
    error = _run_disk_full("league", root)
    assert error["errno"] == errno.EFBIG, error
    manifest = json.loads((root / MANIFEST).read_text())
    assert sorted(m["id"] for m in manifest["members"]) == ["main", "main_v1"]
    assert sorted(p.name for p in (root / WEIGHTS_DIR).iterdir()) == ["main_v1.safetensors"]
    # The failed snapshot did not use up its number, and the league works on.
    league = League(spec=LeagueSpec(), storage=root, seed=0)
    member = league.add_snapshot(learner_id="main", weights={"w": torch.zeros(2)}, env_steps=3)
    assert member.id == "main_v2"
    assert torch.equal(league.load_weights("main_v1")["w"], torch.ones(8, 8))


class _EnospcOnFsync:
    """`os.fsync` that reports a full disk for files under `root` (as NFS/ext4 can)."""

    def __init__(self, root: Path) -> None:
        self.root, self.real, self.hits = str(root.resolve()), os.fsync, 0

    def __call__(self, fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        if target.startswith(self.root) and not os.path.isdir(target):
            self.hits += 1
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.real(fd)


def test_enospc_during_checkpoint_save_is_a_user_error_and_keeps_latest(tmp_path, monkeypatch):
    root = tmp_path / "checkpoints"
    store = CheckpointStore(root)
    store.save(iteration=1, parts={"algorithm": _tree(1.0)}, meta={"env_steps": 10})
    fsync = _EnospcOnFsync(root)
    monkeypatch.setattr(atomic.os, "fsync", fsync)
    with pytest.raises(CheckpointWriteError) as info:
        store.save(iteration=2, parts={"algorithm": _tree(2.0)}, meta={"env_steps": 20})
    monkeypatch.undo()
    assert fsync.hits >= 1
    assert isinstance(info.value, UserError) and info.value.errno == errno.ENOSPC
    assert "No space left on device" in str(info.value) and "iter_000001" in str(info.value)
    assert sorted(p.name for p in root.iterdir()) == ["iter_000001", "latest"]
    assert load_checkpoint(store.latest()).meta["iteration"] == 1


def test_enospc_during_league_snapshot_registers_nothing(tmp_path, monkeypatch):
    root = tmp_path / "league"
    league = League(spec=LeagueSpec(), storage=root, seed=0)
    league.add_snapshot(learner_id="main", weights={"w": torch.ones(4)}, env_steps=1)
    manifest_before = (root / MANIFEST).read_bytes()
    monkeypatch.setattr(atomic.os, "fsync", _EnospcOnFsync(root))
    with pytest.raises(OSError) as info:
        league.add_snapshot(learner_id="main", weights={"w": torch.ones(4) * 2}, env_steps=2)
    monkeypatch.undo()
    assert info.value.errno == errno.ENOSPC
    assert "main_v2" not in league.pool
    assert (root / MANIFEST).read_bytes() == manifest_before
    assert sorted(p.name for p in (root / WEIGHTS_DIR).iterdir()) == ["main_v1.safetensors"]
    assert [m.id for m in League(spec=LeagueSpec(), storage=root, seed=0).members] == [
        "main",
        "main_v1",
    ]
