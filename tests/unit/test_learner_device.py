"""GPUs per learner (rl_platform/learners/device.py): a remote learner keeps the spec's GPUs
whatever the driver has, falls back to CPU on a node without CUDA; the local learner resolves
its device in the driver. Built without starting Ray."""

from collections.abc import Iterator

import pytest
from loguru import logger

from rl_platform.learners import device
from rl_platform.learners.device import LearnerNode, learner_gpus
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.spec import load_spec
from rl_platform.spec.sections import ResourcesSpec
from tests.conftest import EXPERIMENTS


@pytest.fixture
def log_lines() -> Iterator[list[str]]:
    lines: list[str] = []
    handle = logger.add(lambda message: lines.append(str(message)), level="INFO")
    yield lines
    logger.remove(handle)


@pytest.fixture
def no_ray(monkeypatch) -> None:
    """As in a driver before Ray starts (the suite's session Ray may be up): nothing to probe."""
    monkeypatch.setattr(device.ray, "is_initialized", lambda: False)


def test_cluster_profile_config_asks_for_a_gpu_learner_and_placed_actors(
    monkeypatch, no_ray
) -> None:
    # The driver of a submitted job runs on the head, which has no GPU: that must not matter.
    monkeypatch.setattr(device, "resolve_device", lambda requested: "cpu")
    spec = load_spec(EXPERIMENTS / "duel_selfplay.yaml", profile="cluster")
    config = build_algorithm_config(spec)
    assert (config.num_learners, config.num_gpus_per_learner) == (1, 1)
    assert config.custom_resources_per_learner == {"rlp_learner": 1}
    assert (config.num_env_runners, config.num_cpus_per_env_runner) == (16, 1)
    assert config.custom_resources_per_env_runner == {"rlp_env_runner": 1}


def test_the_local_learner_resolves_its_device_in_the_driver(monkeypatch, log_lines) -> None:
    monkeypatch.setattr(device, "resolve_device", lambda requested: "cpu")
    assert learner_gpus(ResourcesSpec(learners=0, gpus_per_learner=1)) == 0
    assert log_lines[-1].rstrip().endswith("learner device: cpu"), log_lines[-1]
    monkeypatch.setattr(device, "resolve_device", lambda requested: "cuda")
    assert learner_gpus(ResourcesSpec(learners=0)) == 1
    assert any("learner device: cuda (gpus_per_learner=1.0)" in line for line in log_lines)


def test_a_remote_learner_on_a_node_without_cuda_trains_on_cpu(monkeypatch, log_lines) -> None:
    asked = {}

    def probe(*, gpus: float, custom: dict[str, float]) -> LearnerNode:
        asked.update(gpus=gpus, custom=custom)
        return LearnerNode(node_id="f" * 56, ip="10.0.0.7", cuda=False)

    monkeypatch.setattr(device.ray, "is_initialized", lambda: True)
    monkeypatch.setattr(device, "probe_learner_node", probe)
    res = ResourcesSpec(learners=1, gpus_per_learner=1, custom_resources_per_learner={"a": 1})
    assert learner_gpus(res) == 0
    assert asked == {"gpus": 1, "custom": {"a": 1}}
    assert any("learner device: cpu (no GPU on node 10.0.0.7" in line for line in log_lines)

    monkeypatch.setattr(device, "probe_learner_node", lambda **_: LearnerNode("n", "ip", True))
    assert learner_gpus(res) == 1


@pytest.mark.parametrize(
    "device_name, gpus, expected",
    [("auto", 2, 2), ("auto", 0, 0), ("cpu", 1, 0), ("cuda", 0, 1), ("cuda", 0.5, 0.5)],
)
def test_device_is_an_explicit_choice_for_remote_learners(
    device_name, gpus, expected, no_ray
) -> None:
    res = ResourcesSpec(learners=2, gpus_per_learner=gpus, device=device_name)
    assert res.learner_gpu_request() == expected
    assert learner_gpus(res) == expected  # Ray not started: nothing to probe


@pytest.mark.parametrize("name", ["CPU", "GPU", "memory"])
def test_rays_own_resources_are_refused_as_custom_ones(name, write_spec) -> None:
    from rl_platform.base.errors import SpecError

    path = write_spec("name: x\nenv: {id: CartPole-v1}\n")
    with pytest.raises(SpecError, match=f"custom_resources_per_learner: '{name}' is one of Ray"):
        load_spec(path, overrides=[f"resources.custom_resources_per_learner={{{name}: 1}}"])
