"""How many GPUs each learner asks RLlib for, and its CPU fallback on a node without CUDA.

How many is one rule, `ResourcesSpec.learner_gpu_request`, the one that search trials and
seeds reserve by (search/budget.py). The local learner (`resources.learners: 0`) trains in the
driver, so its `device` is resolved on this machine first. A remote learner runs wherever Ray
places it, usually not here (a cluster's head has no GPU), so its `device` is read as written.

RLlib 2.60 trusts that number. A remote learner asking for a GPU on a node that advertises one
but has no CUDA (Ray's fake multi-node cluster, a node started with `--num-gpus` by hand, a
broken driver) does not fall back: Ray Train's torch backend opens an NCCL process group for
any learner with a GPU, and torch refuses ("nccl2 requires at least one CUDA device",
ray/train/torch/config.py `_TorchBackend.on_start`); past that, `TorchLearner.build` would
move the module to `cuda:0` (ray/rllib/utils/framework.py `get_device`). There is no switch
for it on the new API stack (`_fake_gpus` is old-stack only). So before the learners start,
one zero-CPU task with a learner's resources asks its node whether torch sees CUDA; if not,
the learners ask for no GPU, keep their custom resources (they still land on that node type)
and the log says why.
"""

from dataclasses import dataclass

import ray
import torch
from loguru import logger

from rl_platform.base.devices import resolve_device
from rl_platform.base.errors import UserError
from rl_platform.spec.sections import ResourcesSpec

LEARNER_NODE_WAIT_S = 30 * 60
"""How long to wait for a node with a learner's resources (an autoscaler starts one in minutes)."""
WAIT_NOTICE_S = 60.0
"""A line in the log every this many seconds while waiting."""
MPS_NOTICE = "RLlib 2.60 learners run on CUDA or CPU; MPS requested, using CPU"


@dataclass(frozen=True)
class LearnerNode:
    """What the probe task saw on the node Ray gave it."""

    node_id: str
    ip: str
    cuda: bool


def learner_gpus(resources: ResourcesSpec) -> float:
    """`num_gpus_per_learner` for RLlib; logs the learner device."""
    if resources.learners == 0:
        return _local_learner_gpus(resources)
    if resources.device == "mps":
        logger.warning(MPS_NOTICE)
    gpus = resources.learner_gpu_request()
    if gpus == 0 or not ray.is_initialized():
        logger.info(_device_line(gpus, f"{resources.learners} remote learner(s)"))
        return gpus
    node = probe_learner_node(gpus=gpus, custom=resources.custom_resources_per_learner)
    if not node.cuda:
        logger.warning(
            "learner device: cpu (no GPU on node {} {}, which advertises one; the learner "
            "asks for gpus_per_learner=0 instead of {})",
            node.ip,
            node.node_id[:12],
            gpus,
        )
        return 0.0
    logger.info(_device_line(gpus, f"node {node.ip}"))
    return gpus


def _local_learner_gpus(resources: ResourcesSpec) -> float:
    device = resolve_device(resources.device)
    if device == "mps":
        logger.warning(MPS_NOTICE)
    gpus = resources.learner_gpu_request(resolved_device=device)
    logger.info(_device_line(gpus))
    return gpus


def _device_line(gpus: float, *details: str) -> str:
    """`learner device: cpu` or `cuda (gpus_per_learner=1.0, ...)`: the GPU count only where
    one is asked of Ray (a zero count would be noise on a laptop's console), then `details`."""
    shown = [f"gpus_per_learner={gpus}"] if gpus else []
    shown += details
    device = "cuda" if gpus else "cpu"
    return (
        f"learner device: {device} ({', '.join(shown)})" if shown else f"learner device: {device}"
    )


def _node_sees_cuda() -> LearnerNode:
    """Runs on the learner's node."""
    return LearnerNode(
        node_id=ray.get_runtime_context().get_node_id(),
        ip=ray.util.get_node_ip_address(),
        cuda=torch.cuda.device_count() > 0,
    )


def probe_learner_node(*, gpus: float, custom: dict[str, float]) -> LearnerNode:
    """Run `_node_sees_cuda` on a node with a learner's GPUs and custom resources, waiting
    for the autoscaler to start one. Inside a Tune trial the task lands in the trial's
    placement group (Tune captures child tasks), in the learner's bundle."""
    request = {"GPU": gpus, **custom}
    task = ray.remote(_node_sees_cuda).options(num_cpus=0, num_gpus=gpus, resources=dict(custom))
    ref = task.remote()
    waited = 0.0
    while not ray.wait([ref], timeout=WAIT_NOTICE_S)[0]:
        waited += WAIT_NOTICE_S
        if waited >= LEARNER_NODE_WAIT_S:
            ray.cancel(ref)
            raise UserError(
                f"no node offered a learner's resources {request} in {waited / 60:.0f} min; "
                "on a cluster see `ray status` (node types, GPU quota); a local Ray has no "
                "such node: train without `--profile cluster` (resources.learners: 0)"
            )
        logger.info(
            "waiting {:.0f} min for a node with {} for the learner (`ray status` shows "
            "pending requests; a local Ray never has one)",
            waited / 60,
            request,
        )
    return ray.get(ref)
