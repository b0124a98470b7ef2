"""`rlp validate --cluster FILE`: node types read from launcher YAMLs and KubeRay manifests
(rl_platform/capacity/node_types.py), and the warnings for resources no node type offers
(rl_platform/capacity/fit.py). Ray-free."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.capacity.fit import fit_warnings
from rl_platform.capacity.node_types import NodeType, read_node_types
from rl_platform.cli import app
from rl_platform.spec.sections import ResourcesSpec
from tests.conftest import EXPERIMENTS, REPO_ROOT

CLUSTER = REPO_ROOT / "cluster"
DUEL = str(EXPERIMENTS / "duel_selfplay.yaml")
TYPES = [
    NodeType("head", {"CPU": 0}, max_nodes=1, head=True),
    NodeType("gpu", {"CPU": 8, "GPU": 1, "rlp_learner": 1}, max_nodes=2),
    NodeType("cpu", {"CPU": 16, "rlp_env_runner": 16}, max_nodes=2),
]
PLACED = {
    "learners": 1,
    "gpus_per_learner": 1,
    "env_runners": 16,
    "custom_resources_per_learner": {"rlp_learner": 1},
    "custom_resources_per_env_runner": {"rlp_env_runner": 1},
}


def _warnings(**changes) -> list[str]:
    return fit_warnings(ResourcesSpec(**(PLACED | changes)), TYPES, source="c.yaml")


def test_a_spec_that_fits_gets_no_warning() -> None:
    assert _warnings() == []


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"gpus_per_learner": 2}, "resources.gpus_per_learner=2: the most any node type in "),
        ({"cpus_per_env_runner": 32}, "resources.cpus_per_env_runner=32: the most any node"),
        (
            {"custom_resources_per_learner": {"tpu_pod": 1}},
            "resources.custom_resources_per_learner.tpu_pod=1: no node type in c.yaml declares",
        ),
        ({"learners": 3}, "resources.learners=3: at most 2 learners fit in c.yaml"),
        ({"env_runners": 40}, "resources.env_runners=40: at most 32 env runners fit"),
        ({"learners": 0}, "resources.learners=0: the learner trains in the driver on the head"),
        ({"env_runners": 0}, "resources.env_runners=0: the driver samples on the head node"),
        (
            {"custom_resources_per_env_runner": {}},
            "env runners may land on GPU node types of c.yaml (gpu); ask for a resource only "
            "CPU node types declare in resources.custom_resources_per_env_runner, e.g. "
            "{rlp_env_runner: 1}",
        ),
    ],
)
def test_each_misfit_is_one_warning(changes, expected) -> None:
    [line] = _warnings(**changes)
    assert line.startswith(expected), line


def test_learners_needing_gpus_on_a_cluster_without_gpu_nodes() -> None:
    cpu_only = [t for t in TYPES if t.name != "gpu"]
    res = ResourcesSpec(**(PLACED | {"custom_resources_per_learner": {}}))
    assert fit_warnings(res, cpu_only, source="c.yaml") == [
        "resources.gpus_per_learner=1: no node type in c.yaml has a GPU"
    ]


def test_a_learner_on_cuda_asks_for_a_gpu_without_gpus_per_learner() -> None:
    # `device: cuda, gpus_per_learner: 0`: the learner asks for 1 GPU (learner_gpu_request),
    # so a GPU-less cluster is a misfit and a GPU-less head gets the note.
    cpu_only = [t for t in TYPES if t.name != "gpu"]
    cuda = {"gpus_per_learner": 0, "device": "cuda", "custom_resources_per_learner": {}}
    res = ResourcesSpec(**(PLACED | cuda))
    assert fit_warnings(res, cpu_only, source="c.yaml") == [
        "resources.device (cuda)=1: no node type in c.yaml has a GPU"
    ]
    [line] = _warnings(learners=0, gpus_per_learner=0, device="cuda")
    assert "on the head node (head), which has no GPU;" in line


def test_kuberay_groups_read_start_params_before_container_limits(tmp_path) -> None:
    manifest = tmp_path / "rc.yaml"
    manifest.write_text(
        "kind: RayCluster\nspec:\n"
        "  headGroupSpec:\n"
        "    rayStartParams: {num-cpus: '0'}\n"
        "    template: {spec: {containers: [{resources: {limits: {cpu: '4'}}}]}}\n"
        "  workerGroupSpecs:\n"
        "    - groupName: g\n      maxReplicas: 3\n"
        r"""      rayStartParams: {resources: '"{\"x\": 2}"'}""" + "\n"
        "      template: {spec: {containers: [{resources: {limits: {cpu: 1500m, "
        "nvidia.com/gpu: 2}}}]}}\n"
    )
    head, group = read_node_types(manifest)
    assert head == NodeType("head", {"CPU": 0}, max_nodes=1, head=True)
    assert group == NodeType("g", {"CPU": 1.5, "GPU": 2, "x": 2}, max_nodes=3)


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "file not found"),
        ("name: x\n", "neither a cluster launcher YAML"),
        ("a: [\n", "not a readable YAML file"),
        ("available_node_types: {a: {}}\n", "cannot read its node types"),
    ],
)
def test_a_bad_cluster_file_is_one_user_error(tmp_path, text, message) -> None:
    path = tmp_path / "c.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(UserError, match=message):
        read_node_types(path)


def _validate(*args: str):
    return CliRunner().invoke(app, ["validate", DUEL, "-p", "cluster", *args])


def test_validate_cluster_profile_against_aws_exits_0_without_warning() -> None:
    result = _validate("--cluster", str(CLUSTER / "aws-gpu.yaml"))
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    assert "rlp_env_runner: 1.0" in result.stdout


def test_validate_warns_when_a_learner_asks_for_more_gpus_than_a_node_has() -> None:
    aws = str(CLUSTER / "aws-gpu.yaml")
    result = _validate("--cluster", aws, "-s", "resources.gpus_per_learner=2")
    assert result.exit_code == 0, result.output
    assert result.stderr.strip() == (
        f"warning: resources.gpus_per_learner=2: the most any node type in {aws} offers is 1 "
        "(gpu_learner)"
    )


def test_validate_with_a_missing_cluster_file_is_exit_2(tmp_path: Path) -> None:
    result = _validate("--cluster", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2 and "file not found" in result.stderr
    assert "Traceback" not in result.output
