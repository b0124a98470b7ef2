"""Does a spec's `resources:` fit a cluster's node types? (`rlp validate --cluster FILE`)

Warnings, not errors: the spec is valid and may be meant for another cluster. A request is
what RLlib asks Ray for per actor (rl_platform/rllib/config.py): a remote learner
`{GPU: gpus, CPU: 1 only without a GPU (RLlib's num_cpus_per_learner "auto"), **custom}`, a
remote env runner `{CPU: cpus_per_env_runner, **custom}`. The driver (the job's `rlp train`)
runs on the head, so `learners: 0` or `env_runners: 0` puts that work there.
"""

import math
from dataclasses import dataclass

from rl_platform.capacity.node_types import NodeType
from rl_platform.spec.sections import ResourcesSpec


@dataclass(frozen=True)
class ActorRequest:
    """What one kind of RLlib actor asks Ray for, and the spec key behind each resource."""

    what: str
    count: int
    count_key: str
    resources: dict[str, float]
    keys: dict[str, str]


def actor_requests(res: ResourcesSpec) -> list[ActorRequest]:
    """The remote learners' and env runners' requests (none for a count of 0)."""
    requests = []
    if res.learners:
        gpus = res.learner_gpu_request()
        learner = {"GPU": gpus, "CPU": 0.0 if gpus else 1.0, **res.custom_resources_per_learner}
        # The setting the GPUs come from: `device: cuda` asks for 1 where gpus_per_learner is 0.
        gpu_key = (
            "resources.gpus_per_learner" if res.gpus_per_learner else "resources.device (cuda)"
        )
        keys = {"GPU": gpu_key, "CPU": "resources.learners (1 CPU each)"}
        keys |= {
            k: f"resources.custom_resources_per_learner.{k}"
            for k in res.custom_resources_per_learner
        }
        requests.append(ActorRequest("learner", res.learners, "learners", _positive(learner), keys))
    if res.env_runners:
        runner = {"CPU": res.cpus_per_env_runner, **res.custom_resources_per_env_runner}
        keys = {"CPU": "resources.cpus_per_env_runner"} | {
            k: f"resources.custom_resources_per_env_runner.{k}"
            for k in res.custom_resources_per_env_runner
        }
        requests.append(
            ActorRequest("env runner", res.env_runners, "env_runners", _positive(runner), keys)
        )
    return requests


def fit_warnings(res: ResourcesSpec, node_types: list[NodeType], *, source: str) -> list[str]:
    """One line per way `res` does not fit the node types of the cluster file `source`."""
    known = [t for t in node_types if t.resources is not None]
    lines = [
        f"node type {t.name} in {source} declares no resources; it was not checked"
        for t in node_types
        if t.resources is None
    ]
    lines += _work_on_head(res, node_types)
    for request in actor_requests(res):
        lines += _request_fit(request, known, source)
    return lines


def _work_on_head(res: ResourcesSpec, node_types: list[NodeType]) -> list[str]:
    head = next((t for t in node_types if t.head), None)
    if head is None:
        return []
    where = f"the head node ({head.name})"
    no_gpu = head.resources is not None and head.resources.get("GPU", 0) == 0
    lines = []
    if res.learners == 0:
        gpu_note = ", which has no GPU" if no_gpu and res.learner_gpu_request() else ""
        lines.append(
            f"resources.learners=0: the learner trains in the driver on {where}{gpu_note}; "
            "set resources.learners: 1 (e.g. --profile cluster)"
        )
    if res.env_runners == 0:
        lines.append(
            f"resources.env_runners=0: the driver samples on {where}; set "
            "resources.env_runners (e.g. --profile cluster)"
        )
    return lines


def _request_fit(request: ActorRequest, known: list[NodeType], source: str) -> list[str]:
    fitting = [t for t in known if _per_node(request.resources, t) >= 1]
    if not fitting:
        return [_why_not(request, known, source)]
    lines = []
    capacity = sum(_per_node(request.resources, t) * t.max_nodes for t in fitting)
    if capacity < request.count:
        names = ", ".join(t.name for t in fitting)
        lines.append(
            f"resources.{request.count_key}={request.count}: at most {capacity} "
            f"{request.what}s fit in {source} (node types {names} at their max_workers)"
        )
    gpu_types = [t.name for t in fitting if _offer(t, "GPU") > 0]
    if request.what == "env runner" and gpu_types and len(gpu_types) < len(fitting):
        lines.append(
            f"env runners may land on GPU node types of {source} ({', '.join(gpu_types)}); "
            "ask for a resource only CPU node types declare in "
            "resources.custom_resources_per_env_runner"
            + _suggestion(known, exclude=[t for t in known if _offer(t, "GPU") > 0])
        )
    return lines


def _why_not(request: ActorRequest, known: list[NodeType], source: str) -> str:
    """The first resource that no node type offers enough of."""
    for name, amount in request.resources.items():
        best = max(known, key=lambda t: _offer(t, name), default=None)
        offered = _offer(best, name) if best is not None else 0.0
        key = request.keys[name]
        if offered == 0:
            thing = {"GPU": "has a GPU", "CPU": "offers CPUs"}.get(name, f"declares {name!r}")
            return f"{key}={amount:g}: no node type in {source} {thing}"
        if offered < amount:
            return (
                f"{key}={amount:g}: the most any node type in {source} offers is "
                f"{offered:g} ({best.name})"
            )
    return f"no node type in {source} offers a {request.what}'s {request.resources} on one node"


def _suggestion(known: list[NodeType], *, exclude: list[NodeType]) -> str:
    taken = {name for t in exclude for name in t.resources or {}}
    own = sorted(
        {name for t in known if t not in exclude for name in t.resources or {}}
        - taken
        - {"CPU", "GPU"}
    )
    return f", e.g. {{{own[0]}: 1}}" if own else ""


def _per_node(request: dict[str, float], node_type: NodeType) -> float:
    """How many such actors one node of the type holds at once."""
    counts = [math.floor(_offer(node_type, k) / amount + 1e-9) for k, amount in request.items()]
    return min(counts, default=math.inf)


def _offer(node_type: NodeType, name: str) -> float:
    return (node_type.resources or {}).get(name, 0.0)


def _positive(resources: dict[str, float]) -> dict[str, float]:
    return {name: amount for name, amount in resources.items() if amount > 0}
