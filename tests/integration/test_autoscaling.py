"""`rlp submit SPEC --profile cluster` on a simulated cluster built from cluster/aws-gpu.yaml:
the autoscaler starts a GPU learner node and a CPU env-runner node for the job, the learner and
the env runner land on them (nothing on the head), the job succeeds with the learner's CPU
fallback logged (the fake GPU has no CUDA), and both nodes go away once idle.

Runs Ray's fake multi-node provider (worker "nodes" are extra raylets on this machine). It does
not use `ray.cluster_utils.AutoscalingCluster` itself: in Ray 2.60 its config template
(`fake_multi_node/example.yaml`) is missing from the wheel, and its start/shutdown run
`ray stop --force`, which kills every Ray process on the machine, other sessions' included. The
same config and environment are built here, and only this cluster's processes are stopped.
The driver runs in a subprocess so it never meets a Ray session of the test process.
"""

import contextlib
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.background import Background, Scenario
from tests.ray_head_support import START_ATTEMPTS, free_port, kill_scoped, start_head

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
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


def _head_env(base: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in {"RAY_ADDRESS", "RAY_AUTH_TOKEN_PATH"}}
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


def _launch(
    cluster_yaml: Path, temp_dir: str, env: dict[str, str], dashboard_port: int
) -> tuple[subprocess.Popen, str]:
    """Start `ray start --head --block` with the fake provider and its job API on
    127.0.0.1:`dashboard_port`; return it and its GCS address."""
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
        "--dashboard-host=127.0.0.1",
        f"--dashboard-port={dashboard_port}",
    ]
    head = start_head(flags, temp_dir=temp_dir, env=env)
    return head, gcs_address


@dataclass(frozen=True)
class FakeCluster:
    gcs_address: str
    dashboard_url: str
    env: dict[str, str]
    """For drivers and clients: token auth on, the token in RAY_AUTH_TOKEN."""


@contextlib.contextmanager
def fake_autoscaling_head(cluster_yaml: Path, base_env: dict[str, str]) -> Iterator[FakeCluster]:
    """Start a head with the fake provider and a job API; `base_env` is the test's environment."""
    env = _head_env(base_env)
    for attempt in range(1, START_ATTEMPTS + 1):
        temp_dir = tempfile.mkdtemp(prefix="rlp-as-", dir="/tmp")  # short: unix socket paths
        dashboard_port = free_port()
        head, gcs_address = _launch(cluster_yaml, temp_dir, env, dashboard_port)
        try:
            if _started(Path(temp_dir) / "ray-start.log", head, attempt=attempt, timeout_s=180):
                yield FakeCluster(gcs_address, f"http://127.0.0.1:{dashboard_port}", env)
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


INSPECT = textwrap.dedent(
    """
    import json, sys, time
    import ray
    from ray.util.state import list_actors, list_nodes

    ray.init(address=sys.argv[1], log_to_driver=False)
    api = {"address": sys.argv[2], "limit": 1000, "raise_on_missing_output": False}

    def nodes():
        # resources_total stays known after a node is gone (ray.nodes() forgets it).
        return {n.node_id: {"resources": n.resources_total, "state": n.state}
                for n in list_nodes(detail=True, **api)}

    actors = [{"class": a.class_name, "node": a.node_id} for a in list_actors(detail=True, **api)]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        seen = nodes()
        if sum(n["state"] == "ALIVE" for n in seen.values()) == 1:
            break
        time.sleep(1)
    print(json.dumps({"nodes": seen, "actors": actors}))
    """
)


def _submit(cluster: FakeCluster, out: Path) -> subprocess.CompletedProcess[str]:
    """The user's one-liner, shrunk to one env runner and one iteration for a 2-core machine
    (each fake worker node has 1 CPU)."""
    overrides = [
        "resources.env_runners=1",
        "stop.iterations=1",
        "stop.env_steps=null",
        "training.train_batch_size=2000",
        "training.minibatch_size=1000",
        "training.num_epochs=1",
        "logging.wandb=off",
        "logging.tensorboard=false",
    ]
    command = [str(BIN / "rlp"), "submit", "experiments/duel_selfplay.yaml", "--profile", "cluster"]
    for override in overrides:
        command += ["-s", override]
    command += ["--out", str(out), "--address", cluster.dashboard_url]
    return subprocess.run(
        command, cwd=REPO, env=cluster.env, capture_output=True, text=True, timeout=600
    )


def _node_type(resources: dict[str, float]) -> str:
    if "GPU" in resources:
        return "gpu_learner"
    if "rlp_env_runner" in resources:
        return "cpu_env_runner"
    return "head"


@dataclass(frozen=True)
class ScaledRun:
    submitted: subprocess.CompletedProcess[str]
    """`rlp submit`, run to the end."""
    inspected: subprocess.CompletedProcess[str]
    """`INSPECT`: the cluster's nodes and actors after the job, once the workers were idle."""
    out: Path


def _scale_out_and_back(folder: Path, env: dict[str, str]) -> ScaledRun:
    with fake_autoscaling_head(AWS_YAML, env) as cluster:
        submitted = _submit(cluster, folder / "runs")
        inspected = subprocess.run(
            [sys.executable, "-c", INSPECT, cluster.gcs_address, cluster.dashboard_url],
            env=cluster.env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
    return ScaledRun(submitted=submitted, inspected=inspected, out=folder / "runs")


# About 3 min on an idle 2-core machine (three raylets, a job driver, a learner and an env
# runner process), so it runs beside the rest of the suite (tests/background.py).
SCALE_OUT_AND_BACK = Scenario.run_once("autoscaling", _scale_out_and_back)
BACKGROUND = [SCALE_OUT_AND_BACK]


# The limit leaves room for head start retries under load.
@pytest.mark.timeout(1200)
def test_submit_with_the_cluster_profile_scales_out_and_back(background: Background) -> None:
    run = background.result(SCALE_OUT_AND_BACK)
    submitted, inspected = run.submitted, run.inspected
    job_output = submitted.stdout + submitted.stderr
    assert submitted.returncode == 0, job_output[-4000:]
    assert inspected.returncode == 0, inspected.stderr[-3000:]
    report = json.loads(inspected.stdout.strip().splitlines()[-1])
    types = {node: _node_type(seen["resources"]) for node, seen in report["nodes"].items()}

    # The autoscaler launched both worker types for the job (the GPU type possibly twice: the
    # test's 3 s idle timeout can end the node of the learner's device probe before the learner
    # itself asks for one).
    assert set(types.values()) == {"cpu_env_runner", "gpu_learner", "head"}, report["nodes"]
    assert list(types.values()).count("cpu_env_runner") == 1, report["nodes"]
    # The learner (Ray Train's worker actor, `..._WrappedExecutable`) ran on the GPU-typed node,
    # the env runner on the CPU worker; on the head only Ray's own job supervisor.
    placed = [(actor["class"], types.get(actor["node"])) for actor in report["actors"]]
    learners = [kind for cls, kind in placed if cls.endswith("_WrappedExecutable")]
    runners = [kind for cls, kind in placed if cls.endswith("EnvRunner")]
    assert learners == ["gpu_learner"], placed
    assert runners == ["cpu_env_runner"], placed
    assert {cls for cls, kind in placed if kind == "head"} == {"JobSupervisor"}, placed
    # No CUDA behind the fake GPU: the learner fell back to CPU and said so; the run finished.
    assert "learner device: cpu (no GPU on node" in job_output
    assert list(run.out.glob("duel_selfplay/*/checkpoints/iter_*"))
    # Idle for longer than idle_timeout_minutes: both workers are gone, the head remains.
    alive = [types[node] for node, seen in report["nodes"].items() if seen["state"] == "ALIVE"]
    assert alive == ["head"], report["nodes"]
