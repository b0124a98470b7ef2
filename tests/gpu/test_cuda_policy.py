"""A learned policy on the GPU (evaluation during a run that acts there) acts as on the CPU:
the same greedy actions and states per key, within 1e-4 in fp32 (`gpu` marker)."""

import copy

import numpy as np
import pytest
import torch

from rl_platform.policies.module_policy import ModulePolicy
from rl_platform.policies.rebuild import RebuiltModule
from tests.acting_support import streaming_module

if not torch.cuda.is_available():  # named explicitly on a machine without one
    pytest.skip(
        "needs a CUDA GPU (tests/gpu is collected only where torch sees one; this file was named "
        "explicitly on a machine without)",
        allow_module_level=True,
    )


def _policy(module, device: str) -> ModulePolicy:
    rebuilt = RebuiltModule(
        module=module,
        observation_space=module.observation_space,
        action_space=module.action_space,
        normalize_actions=False,
        clip_actions=False,
    )
    return ModulePolicy("test", rebuilt, sample=False, device=device)


def test_the_gpu_policy_keeps_states_per_key_as_the_cpu_one() -> None:
    module = streaming_module(precision="fp32")
    cpu, gpu = _policy(module, "cpu"), _policy(copy.deepcopy(module), "cuda")
    rng = np.random.default_rng(0)
    for step in range(6):
        keys = ["a", "b", "c"] if step % 2 == 0 else ["c", "a"]
        obs = {
            "obs": rng.normal(size=(len(keys), 4)).astype(np.float32),
            "opponent_history": rng.normal(size=(len(keys), 1, 4)).astype(np.float32),
            "history_mask": np.ones((len(keys), 1), np.float32),
        }
        np.testing.assert_array_equal(gpu.act(obs, rng, keys=keys), cpu.act(obs, rng, keys=keys))
    for key in ("a", "b", "c"):
        for name, value in cpu.state(key).items():
            got = gpu.state(key)[name].cpu().numpy()
            np.testing.assert_allclose(got, value, atol=1e-4, rtol=1e-4)
    gpu.forget(["a"])
    assert gpu.state("a") is None and gpu.state("b") is not None
