"""A real `BCPPOLearner` on CartPole built locally (no Ray cluster), and a hand-made train batch
with every column PPO's loss reads plus the BC columns, for the BC learner unit tests."""

import math
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode

MODULE = "default_policy"


def build_bc_learner(*, bc: dict[str, Any], training: dict[str, Any] | None = None) -> Any:
    from rl_platform.bc.extension import bc_extension
    from rl_platform.rllib.config import build_algorithm_config
    from rl_platform.spec import ExperimentSpec

    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_learner_unit",
            "env": {"id": "CartPole-v1"},
            "model": {"hidden": [8]},
            "training": training or {},
            "bc": {"teacher": "scripted://cartpole/balance", **bc},
        }
    )
    space = gym.make("CartPole-v1")
    return build_algorithm_config(spec, extensions=[bc_extension]).build_learner(
        spaces={MODULE: (space.observation_space, space.action_space)}
    )


def bc_batch(n: int = 12) -> dict[str, torch.Tensor]:
    """n CartPole steps cycling teacher-led, student-led, plain (n a multiple of 3)."""
    rng = np.random.default_rng(0)
    modes = [BCMode.TEACHER_LED, BCMode.STUDENT_LED, BCMode.PLAIN] * (n // 3)
    return {
        "obs": torch.tensor(rng.normal(size=(n, 4)), dtype=torch.float32),
        "actions": torch.tensor(rng.integers(0, 2, n)),
        "action_logp": torch.full((n,), math.log(0.5)),
        "action_dist_inputs": torch.zeros(n, 2),
        "advantages": torch.tensor(rng.normal(size=n), dtype=torch.float32),
        "value_targets": torch.tensor(rng.normal(size=n), dtype=torch.float32),
        "loss_mask": torch.ones(n, dtype=torch.bool),
        BC_MODE: torch.tensor(modes),
        TEACHER_ACTION: torch.tensor(rng.integers(0, 2, n)),
    }
