"""Cluster definitions pass Ray's launcher schema and have the shape docs/cluster.md promises."""

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from ray.autoscaler._private.util import prepare_config, validate_config

from rl_platform.capacity.fit import fit_warnings
from rl_platform.capacity.node_types import NodeType, read_node_types
from rl_platform.spec import load_spec
from tests.conftest import EXPERIMENTS

CLUSTER = Path(__file__).resolve().parents[2] / "cluster"
LAUNCHER_YAMLS = ["aws-gpu.yaml", "gcp-gpu.yaml"]


def _load(name: str) -> dict[str, Any]:
    return yaml.safe_load((CLUSTER / name).read_text())


def _validate(config: dict[str, Any]) -> dict[str, Any]:
    # The same two steps `ray up` runs before it touches the cloud.
    prepared = prepare_config(copy.deepcopy(config))
    validate_config(prepared)
    return prepared


@pytest.mark.parametrize("name", LAUNCHER_YAMLS)
def test_launcher_yaml_passes_rays_schema(name: str) -> None:
    prepared = _validate(_load(name))
    types = prepared["available_node_types"]
    head = types[prepared["head_node_type"]]
    assert head["resources"] == {"CPU": 0}, "the head must not run training"
    gpu_types = [t for t in types.values() if t["resources"].get("GPU", 0) > 0]
    cpu_types = [
        t
        for n, t in types.items()
        if n != prepared["head_node_type"] and "GPU" not in t["resources"]
    ]
    assert gpu_types and all(t["min_workers"] == 0 and t["max_workers"] > 0 for t in gpu_types)
    assert cpu_types and all(t["resources"]["CPU"] > 0 for t in cpu_types)
    assert prepared["max_workers"] >= sum(t["max_workers"] for t in [*gpu_types, *cpu_types])
    assert 0 < prepared["idle_timeout_minutes"] <= 30


@pytest.mark.parametrize("name", LAUNCHER_YAMLS)
def test_launcher_yaml_turns_on_token_auth_and_keeps_dashboard_local(name: str) -> None:
    config = _load(name)
    assert config["file_mounts"]["~/.ray/auth_token"] == "~/.ray/auth_token"
    for key in ("head_start_ray_commands", "worker_start_ray_commands"):
        start = [c for c in config[key] if "ray start" in c]
        assert start and all("RAY_AUTH_MODE=token" in c for c in start), key
    [head_start] = [c for c in config["head_start_ray_commands"] if "ray start" in c]
    assert "--dashboard-host=127.0.0.1" in head_start
    setup = " ".join(config["setup_commands"])
    assert "pip install --user --upgrade uv" in setup and "uv sync --frozen" in setup


@pytest.mark.parametrize("name", LAUNCHER_YAMLS)
@pytest.mark.parametrize(
    "path, misspelt",
    [((), "idle_timout_minutes"), (("available_node_types", "gpu_learner"), "max_worker")],
)
def test_misspelt_key_is_rejected(name: str, path: tuple[str, ...], misspelt: str) -> None:
    config = _load(name)
    node = config
    for part in path:
        node = node[part]
    node[misspelt] = 1
    with pytest.raises(jsonschema.ValidationError, match=misspelt):
        _validate(config)


def test_kuberay_manifest_has_autoscaling_gpu_and_cpu_groups_and_token_auth() -> None:
    manifest = _load("kuberay-gpu.yaml")
    assert manifest["apiVersion"] == "ray.io/v1" and manifest["kind"] == "RayCluster"
    spec = manifest["spec"]
    assert spec["enableInTreeAutoscaling"] is True
    head = spec["headGroupSpec"]
    assert head["rayStartParams"]["num-cpus"] == "0"
    assert head["rayStartParams"]["dashboard-host"] == "127.0.0.1"

    groups = {g["groupName"]: g for g in spec["workerGroupSpecs"]}
    gpu = [g for g in groups.values() if _limits(g).get("nvidia.com/gpu", 0) >= 1]
    cpu = [g for g in groups.values() if "nvidia.com/gpu" not in _limits(g)]
    assert gpu and cpu
    for group in groups.values():
        assert group["minReplicas"] == 0 < group["maxReplicas"]

    images = {c["image"] for c in _containers(head)} | {
        c["image"] for g in groups.values() for c in _containers(g)
    }
    assert len(images) == 1, "head and workers must run the same image"
    env_lists = [c["env"] for c in _containers(head)]
    env_lists += [c["env"] for g in groups.values() for c in _containers(g)]
    env_lists.append(spec["autoscalerOptions"]["env"])
    for env in env_lists:
        by_name = {e["name"]: e for e in env}
        assert by_name["RAY_AUTH_MODE"]["value"] == "token"
        assert "secretKeyRef" in by_name["RAY_AUTH_TOKEN"]["valueFrom"], "token from a Secret"


def _containers(group: dict[str, Any]) -> list[dict[str, Any]]:
    return group["template"]["spec"]["containers"]


def _limits(group: dict[str, Any]) -> dict[str, Any]:
    return _containers(group)[0]["resources"]["limits"]


# Placement (docs/cluster.md, "The cluster profile and where things run"): the three files
# declare the same node types with the same custom resources, and every shipped `cluster`
# profile asks for resources that put learners on GPU nodes and env runners on CPU workers.
ALL_FILES = [*LAUNCHER_YAMLS, "kuberay-gpu.yaml"]
CLUSTER_PROFILE_SPECS = [
    "duel_selfplay.yaml",
    "duel_bc_ppo.yaml",
    "duel_selfplay_transformer.yaml",
    "atari_pong_ppo.yaml",
    "mujoco_hopper_sac.yaml",
]


def _by_role(name: str) -> dict[str, NodeType]:
    types = read_node_types(CLUSTER / name)
    roles = {"head" if t.head else "gpu" if t.resources.get("GPU") else "cpu": t for t in types}
    assert len(roles) == len(types) == 3, name
    return roles


def test_the_three_cluster_files_declare_the_same_node_types() -> None:
    expected = {
        "head": {"CPU": 0},
        "gpu": {"CPU": 8, "GPU": 1, "rlp_learner": 1},
        "cpu": {"CPU": 16, "rlp_env_runner": 16},
    }
    for name in ALL_FILES:
        roles = _by_role(name)
        assert {role: t.resources for role, t in roles.items()} == expected, name
        assert (roles["gpu"].max_nodes, roles["cpu"].max_nodes) == (4, 8), name


def test_kuberay_custom_resources_are_the_json_ray_start_reads() -> None:
    groups = {g["groupName"]: g for g in _load("kuberay-gpu.yaml")["spec"]["workerGroupSpecs"]}
    # KubeRay hands the string to `ray start --resources=<value>` through a shell: the outer
    # quotes are the shell's, the rest must be a JSON object.
    expected = {"gpu-learner": {"rlp_learner": 1}, "cpu-env-runner": {"rlp_env_runner": 16}}
    for group, resources in expected.items():
        value = groups[group]["rayStartParams"]["resources"]
        assert value.startswith('"') and value.endswith('"')
        assert json.loads(json.loads(value)) == resources


@pytest.mark.parametrize("spec_name", CLUSTER_PROFILE_SPECS)
def test_cluster_profile_places_learners_on_gpu_nodes_and_env_runners_on_cpu_workers(
    spec_name: str,
) -> None:
    res = load_spec(EXPERIMENTS / spec_name, profile="cluster").resources
    assert res.learners >= 1 and res.gpus_per_learner >= 1 and res.env_runners >= 1
    for name in ALL_FILES:
        roles = _by_role(name)
        assert set(res.custom_resources_per_learner) <= set(roles["gpu"].resources)
        assert not set(res.custom_resources_per_learner) & set(roles["cpu"].resources)
        assert set(res.custom_resources_per_env_runner) <= set(roles["cpu"].resources)
        assert not set(res.custom_resources_per_env_runner) & set(roles["gpu"].resources)
        types = list(roles.values())
        assert fit_warnings(res, types, source=name) == [], (spec_name, name)
