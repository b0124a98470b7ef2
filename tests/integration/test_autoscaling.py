"""The node types of cluster/aws-gpu.yaml autoscale: a GPU request adds a GPU worker, idleness
removes it again.

Runs Ray's fake multi-node provider (worker "nodes" are extra raylets on this machine). It does
not use `ray.cluster_utils.AutoscalingCluster` itself: in Ray 2.60 its config template
(`fake_multi_node/example.yaml`) is missing from the wheel, and its start/shutdown run
`ray stop --force`, which kills every Ray process on the machine, other sessions' included. The
same config and environment are built here, and only this cluster's processes are stopped.
The driver runs in a subprocess so it never meets a Ray session of the test process.
"""

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ray_head_support import START_ATTEMPTS, free_port, kill_scoped, start_head

REPO = Path(__file__).resolve().parents[2]
AWS_YAML = REPO / "cluster" / "aws-gpu.yaml"
IDLE_TIMEOUT_MINUTES = 0.05  # 3 s: short enough to watch the GPU node go away
FAKE_HEAD_TYPE = "ray.head.default"  # the fake provider's fixed head type name
OBJECT_STORE_BYTES = 80 * 1024 * 1024


def fake_worker_types(cluster_yaml: Path) -> dict[str, dict[str, Any]]:
    """The launcher's worker types with GPUs kept and CPUs shrunk to fit a 2-core machine."""
    config = yaml.safe_load(cluster_yaml.read_text())
    types = {}
    for name, node_type in config["available_node_types"].items():
        if name == config["head_node_type"]:
            continue
        resources = {key: int(value) for key, value in node_type["resources"].items()}
        resources["CPU"] = 1
        resources["object_store_memory"] = OBJECT_STORE_BYTES
        types[name] = {
            "resources": resources,
            "node_config": {},
            "min_workers": node_type.get("min_workers", 0),
            "max_workers": 1,
        }
    return types


def fake_cluster_config(
    *, head_resources: dict[str, int], worker_types: dict[str, Any], gcs_address: str
) -> dict[str, Any]:
    return {
        "cluster_name": "rlp-fake",
        "max_workers": len(worker_types),
        "upscaling_speed": 1.0,
        "idle_timeout_minutes": IDLE_TIMEOUT_MINUTES,
        "provider": {
            "type": "fake_multinode",
            "gcs_address": gcs_address,
            "use_node_id_as_ip": True,
            "disable_node_updaters": True,
            "disable_launch_config_check": True,
        },
        "auth": {},
        "docker": {},
        "available_node_types": {
            **worker_types,
            FAKE_HEAD_TYPE: {"resources": head_resources, "node_config": {}, "max_workers": 0},
        },
        "head_node_type": FAKE_HEAD_TYPE,
        "file_mounts": {},
        "cluster_synced_files": [],
        "file_mounts_sync_continuously": False,
        "initialization_commands": [],
        "setup_commands": [],
        "head_setup_commands": [],
        "worker_setup_commands": [],
        "head_start_ray_commands": [],
        "worker_start_ray_commands": [],
    }


def _head_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH"}}
    env.update(
        RAY_AUTH_MODE="token",
        RAY_AUTH_TOKEN=secrets.token_hex(32),
        AUTOSCALER_UPDATE_INTERVAL_S="1",
        RAY_FAKE_CLUSTER="1",
        RAY_enable_autoscaler_v2="0",
        RAY_USAGE_STATS_ENABLED="0",
        # The raylet waits this long for its dashboard agent to report a port; the agent is a
        # heavy Python import that misses the default on a busy 2-core machine.
        RAY_raylet_start_wait_time_s="120",
    )
    return env


def _launch(cluster_yaml: Path, temp_dir: str, env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """Start `ray start --head --block` with the fake provider; return it and its GCS address."""
    from ray._private.services import get_node_ip_address

    gcs_address = f"{get_node_ip_address()}:{free_port()}"
    launcher = yaml.safe_load(cluster_yaml.read_text())
    head_cpus = launcher["available_node_types"][launcher["head_node_type"]]["resources"]["CPU"]
    config = fake_cluster_config(
        head_resources={"CPU": head_cpus},
        worker_types=fake_worker_types(cluster_yaml),
        gcs_address=gcs_address,
    )
    config_path = Path(temp_dir) / "autoscaling.json"
    config_path.write_text(json.dumps(config))
    flags = [
        f"--autoscaling-config={config_path}",
        f"--port={gcs_address.rsplit(':', 1)[1]}",
        f"--num-cpus={head_cpus}",
        f"--object-store-memory={OBJECT_STORE_BYTES}",
        "--include-dashboard=false",
    ]
    head = start_head(flags, temp_dir=temp_dir, env=env)
    return head, gcs_address


@contextlib.contextmanager
def fake_autoscaling_head(cluster_yaml: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """Start a head with the fake provider; yield (gcs address, env for drivers)."""
    env = _head_env()
    for attempt in range(1, START_ATTEMPTS + 1):
        temp_dir = tempfile.mkdtemp(prefix="rlp-as-", dir="/tmp")  # short: unix socket paths
        head, gcs_address = _launch(cluster_yaml, temp_dir, env)
        try:
            if _started(Path(temp_dir) / "ray-start.log", head, attempt=attempt, timeout_s=180):
                yield gcs_address, env
                return
        finally:
            kill_scoped(head, temp_dir)
            shutil.rmtree(temp_dir, ignore_errors=True)


def _started(log: Path, proc: subprocess.Popen, *, attempt: int, timeout_s: float) -> bool:
    """True once `ray start` reports success; False if it died or hung and an attempt is left."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if "Ray runtime started" in log.read_text(errors="replace"):
            return True
        time.sleep(0.5)
    if attempt < START_ATTEMPTS:
        return False
    raylet_logs = sorted(log.parent.glob("session_*/logs/raylet.out"))
    raylet_tail = raylet_logs[0].read_text(errors="replace")[-1500:] if raylet_logs else ""
    pytest.fail(
        f"ray start did not come up in {START_ATTEMPTS} attempts:\n"
        f"{log.read_text(errors='replace')[-2000:]}\nraylet.out:\n{raylet_tail}"
    )


DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import ray

    ray.init(address=sys.argv[1], log_to_driver=False)

    def alive():
        return {n["NodeID"]: n["Resources"] for n in ray.nodes() if n["Alive"]}

    before = alive()

    @ray.remote(num_gpus=1)
    def learner_node():
        return ray.get_runtime_context().get_node_id()

    start = time.monotonic()
    node_id = ray.get(learner_node.remote(), timeout=90)
    added_after_s = time.monotonic() - start
    during = alive()

    deadline = time.monotonic() + 60
    while node_id in alive() and time.monotonic() < deadline:
        time.sleep(0.5)
    print(json.dumps({
        "before": before, "during": during, "after": alive(), "node_id": node_id,
        "added_after_s": added_after_s, "removed_after_s": time.monotonic() - start,
    }))
    """
)


# About 45 s on an idle 2-core machine; the limit leaves room for head start retries under load.
@pytest.mark.timeout(900)
def test_gpu_worker_is_added_on_demand_and_removed_when_idle() -> None:
    with fake_autoscaling_head(AWS_YAML) as (gcs_address, env):
        result = subprocess.run(
            [sys.executable, "-c", DRIVER, gcs_address],
            env=env,
            capture_output=True,
            text=True,
            timeout=200,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])

    # Only the head at first, and it offers no CPU for training.
    assert len(report["before"]) == 1
    [head] = report["before"].values()
    assert head.get("CPU", 0) == 0 and "GPU" not in head

    # The GPU request brought up exactly one node, of the gpu_learner type (GPU from the YAML,
    # CPU shrunk for the test); the CPU env-runner type was not started.
    node_id = report["node_id"]
    assert set(report["during"]) == set(report["before"]) | {node_id}
    assert report["during"][node_id]["GPU"] == 1
    assert report["during"][node_id]["CPU"] == 1

    # Idle for longer than idle_timeout_minutes: the autoscaler removed it again.
    assert node_id not in report["after"], report
    assert set(report["after"]) == set(report["before"])
