"""Throwaway local Ray heads for the cluster tests: free ports and a scoped hard kill."""

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

import ray  # noqa: F401 - puts Ray's bundled psutil on sys.path (not a direct dependency)

START_ATTEMPTS = 3  # `ray start` gives the raylet a fixed 30 s to register; busy CI can miss it


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def kill_scoped(root: subprocess.Popen, marker: str) -> None:
    """SIGKILL the `ray start --block` tree and anything naming our temp dir; nothing else.

    A throwaway test cluster needs no graceful drain, and killing everything at once leaves no
    orphan to be re-parented out of reach. A second sweep catches workers spawned meanwhile.
    """
    import psutil

    for _sweep in range(2):
        procs: dict[int, psutil.Process] = {}
        with contextlib.suppress(psutil.NoSuchProcess):
            parent = psutil.Process(root.pid)
            procs = {p.pid: p for p in [parent, *parent.children(recursive=True)]}
        for proc in psutil.process_iter(["cmdline"]):
            if marker in " ".join(proc.info["cmdline"] or []):
                procs.setdefault(proc.pid, proc)
        procs.pop(os.getpid(), None)
        for proc in procs.values():
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        psutil.wait_procs(list(procs.values()), timeout=10)
    with contextlib.suppress(subprocess.TimeoutExpired):
        root.wait(timeout=5)


def start_head(flags: list[str], *, temp_dir: str, env: dict[str, str]) -> subprocess.Popen:
    """`ray start --head --block` in its own temp dir and process session, with `flags` and
    fresh ports for every side service (so parallel sessions never collide); its output goes to
    `<temp_dir>/ray-start.log`."""
    cmd = [
        str(Path(sys.executable).parent / "ray"),
        *("start", "--head", "--block", f"--temp-dir={temp_dir}", *flags),
        f"--ray-client-server-port={free_port()}",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--dashboard-agent-grpc-port={free_port()}",
        f"--runtime-env-agent-port={free_port()}",
        f"--metrics-export-port={free_port()}",
        "--disable-usage-stats",
    ]
    with (Path(temp_dir) / "ray-start.log").open("w") as log:
        return subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
