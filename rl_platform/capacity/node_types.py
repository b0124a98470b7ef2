"""The node types a cluster file declares, read without Ray: a cluster launcher YAML
(`available_node_types`, cluster/aws-gpu.yaml) or a KubeRay `RayCluster` manifest (its head
and worker groups, cluster/kuberay-gpu.yaml).
"""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rl_platform.base.errors import UserError
from rl_platform.utils.safe_yaml import YamlLimitError, YamlTagError, parse_yaml

KUBERAY_KIND = "RayCluster"
K8S_GPU = "nvidia.com/gpu"


@dataclass(frozen=True)
class NodeType:
    """One kind of node: what each node offers Ray and how many of them there can be."""

    name: str
    resources: dict[str, float] | None
    """`CPU`, `GPU` and custom resources of one node; None: the file declares none (the
    launcher detects them from the instance type) and they cannot be checked."""
    max_nodes: int
    """Most nodes of this type: `max_workers` / `maxReplicas`, 1 for the head."""
    head: bool = False


def read_node_types(path: Path) -> list[NodeType]:
    """The node types in `path`, head first. Raises `UserError` for a file that is neither."""
    data = _read(path)
    try:
        if isinstance(data.get("available_node_types"), dict):
            return _launcher_types(data)
        if data.get("kind") == KUBERAY_KIND:
            return _kuberay_types(data["spec"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"--cluster {path}: cannot read its node types ({exc})") from None
    raise UserError(
        f"--cluster {path}: neither a cluster launcher YAML (available_node_types) nor a "
        f"KubeRay {KUBERAY_KIND} manifest"
    )


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise UserError(f"--cluster {path}: file not found")
    try:
        data = parse_yaml(path.read_text(encoding="utf-8"))
    except (YamlTagError, YamlLimitError, yaml.YAMLError, UnicodeDecodeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"--cluster {path}: not a readable YAML file ({detail})") from None
    if not isinstance(data, dict):
        raise UserError(f"--cluster {path}: expected a mapping at the top level")
    return data


def _launcher_types(data: dict[str, Any]) -> list[NodeType]:
    head_name = data["head_node_type"]
    default_max = int(data.get("max_workers", 0))
    types = []
    for name, node_type in data["available_node_types"].items():
        resources = node_type.get("resources")
        head = name == head_name
        types.append(
            NodeType(
                name=name,
                resources=_numbers(resources) if resources is not None else None,
                max_nodes=1 if head else int(node_type.get("max_workers", default_max)),
                head=head,
            )
        )
    return sorted(types, key=lambda t: not t.head)


def _kuberay_types(spec: dict[str, Any]) -> list[NodeType]:
    head = NodeType("head", _group_resources(spec["headGroupSpec"]), max_nodes=1, head=True)
    workers = [
        NodeType(
            name=group["groupName"],
            resources=_group_resources(group),
            max_nodes=int(group.get("maxReplicas", group.get("replicas", 0))),
        )
        for group in spec.get("workerGroupSpecs") or []
    ]
    return [head, *workers]


def _group_resources(group: dict[str, Any]) -> dict[str, float]:
    """What KubeRay tells `ray start`: rayStartParams first, else the Ray container's limits
    (KubeRay derives num-cpus / num-gpus from them)."""
    params = group.get("rayStartParams") or {}
    container = group["template"]["spec"]["containers"][0]
    pod = container.get("resources") or {}
    limits = pod.get("limits") or pod.get("requests") or {}
    resources: dict[str, float] = {}
    cpus = params.get("num-cpus", limits.get("cpu"))
    if cpus is not None:
        resources["CPU"] = _quantity(cpus)
    gpus = params.get("num-gpus", limits.get(K8S_GPU))
    if gpus is not None:
        resources["GPU"] = _quantity(gpus)
    if "resources" in params:
        resources |= _start_param_resources(params["resources"])
    return resources


def _start_param_resources(value: Any) -> dict[str, float]:
    """`rayStartParams.resources`: KubeRay passes the string to `ray start --resources`, so
    it is written as a quoted JSON object, `'"{\\"rlp_env_runner\\": 16}"'`."""
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, str) and text.startswith('"'):
        text = json.loads(text)
    parsed = json.loads(text) if isinstance(text, str) else text
    if not isinstance(parsed, dict):
        raise ValueError(f"rayStartParams.resources {value!r} is not a JSON object")
    return _numbers(parsed)


def _quantity(value: Any) -> float:
    """A Kubernetes quantity or a plain number: `16`, `"16"`, `"500m"`."""
    text = str(value).strip()
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def _numbers(resources: dict[str, Any]) -> dict[str, float]:
    return {str(name): float(amount) for name, amount in resources.items()}
