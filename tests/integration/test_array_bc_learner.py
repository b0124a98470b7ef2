"""BC + PPO on the array learner (#48) against `BCPPOLearner`'s path: the advantages
standardized over the student's steps, one epoch of minibatch updates with the BC term
(parameters, gradients and Adam moments within 1e-5), the weight moved between updates, and
a BC step that never asks the host a question."""

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.policy.sample_batch import MultiAgentBatch

from rl_platform.bc.extension import bc_extension
from rl_platform.imitation.schedule import BCSettings
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode
from rl_platform.learners.array_bc_ppo import ArrayBCPPOLearner
from rl_platform.learners.array_ppo import minibatch_order
from rl_platform.learners.flat_batch import FlatBatch, flat_batch
from rl_platform.losses.bc import standardize_advantages
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.sampling.rollout_batch import RolloutBatch
from rl_platform.spec import validate_spec_data
from tests.integration.test_array_learner import _batch as plain_batch
from tests.integration.test_array_learner import _sample_batch as plain_sample_batch
from tests.unit.host_reads_support import host_reads_refused

OBS_DIM, ACTIONS, MODULE = 6, 4, "main"


def _learner(coef: float) -> ArrayBCPPOLearner:
    spec = validate_spec_data(
        {
            "name": "array_bc_learner",
            "env": {"id": "rlp/Duel-v0", "envs_per_runner": 4},
            "model": {"type": "mlp", "hidden": [16, 16], "activation": "tanh"},
            "training": {"grad_clip": 0.5, "entropy_coeff": 0.01},
            "bc": {"teacher": "scripted://duel/based", "teacher_led": 0.25, "student_led": 0.5},
        }
    )
    obs = gym.spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
    config = build_algorithm_config(spec, extensions=(bc_extension,)).multi_agent(
        policies={MODULE}, policy_mapping_fn=lambda *a, **k: MODULE
    )
    learner = config.build_learner(env=None, spaces={MODULE: (obs, gym.spaces.Discrete(ACTIONS))})
    assert isinstance(learner, ArrayBCPPOLearner)
    learner.set_bc_settings(_settings(coef))
    return learner


def _settings(coef: float) -> BCSettings:
    return BCSettings(
        phase=0,
        teacher="scripted://duel/based",
        teacher_led=0.25,
        student_led=0.5,
        coef=coef,
        phase_env_steps=0,
    )


def _batch(size: int, seed: int) -> FlatBatch:
    """The array learner test's batch, with BC's columns: a teacher's action and a mode per step."""
    rng = np.random.default_rng(seed + 1)
    return dataclasses.replace(
        plain_batch(size, seed),
        teacher_actions=torch.tensor(rng.integers(0, ACTIONS, size)),
        bc_mode=torch.tensor(rng.integers(0, 3, size)),
    )


def _sample_batch(flat: FlatBatch) -> MultiAgentBatch:
    """The array learner test's sample batch with BC's two columns."""
    batch = plain_sample_batch(flat)
    batch.policy_batches[MODULE][TEACHER_ACTION] = flat.teacher_actions.numpy()
    batch.policy_batches[MODULE][BC_MODE] = flat.bc_mode.numpy()
    return batch


def _optimizer(learner: Any) -> torch.optim.Adam:
    ((_, optimizer),) = learner.get_optimizers_for_module(MODULE)
    return optimizer


@pytest.mark.parametrize("coef", [0.0, 0.7])
def test_one_bc_epoch_equals_bc_ppo_learners_update(ray_local, coef: float) -> None:
    """Same weights, batch (plain, teacher- and student-led steps) and minibatch order: the
    array step's parameters, gradients and Adam moments equal `BCPPOLearner`'s within 1e-5."""
    ours, theirs = _learner(coef), _learner(coef)
    theirs.module.set_state(ours.module.get_state())
    flat = _batch(64, seed=11)
    order = minibatch_order(64, minibatch_size=16, num_epochs=1, shuffle=False, device="cpu")
    sums = ours.train_minibatches(MODULE, flat, order)
    logged = theirs.update(
        batch=_sample_batch(flat),
        minibatch_size=16,
        num_epochs=1,
        shuffle_batch_per_epoch=False,
        timesteps={},
    )[MODULE]
    for key in ("loss/bc", "bc/accuracy", "bc/teacher_led_frac", "bc/coef"):
        assert float(sums[key]) / len(order) == pytest.approx(float(logged[key]), abs=1e-5), key
    mine, rllibs = _optimizer(ours), _optimizer(theirs)
    pairs = zip(ours.module[MODULE].parameters(), theirs.module[MODULE].parameters(), strict=True)
    for p_ours, p_rllib in pairs:
        torch.testing.assert_close(p_ours, p_rllib, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(p_ours.grad, p_rllib.grad, rtol=1e-5, atol=1e-5)
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(
                mine.state[p_ours][key], rllibs.state[p_rllib][key], rtol=1e-5, atol=1e-7
            )


def test_the_weight_set_between_updates_reaches_the_step(ray_local) -> None:
    learner = _learner(0.0)
    flat = _batch(16, seed=12)
    first = learner.train_minibatches(MODULE, flat, torch.arange(16)[None])
    learner.set_bc_settings(_settings(0.3))
    second = learner.train_minibatches(MODULE, flat, torch.arange(16)[None])
    assert float(first["bc/coef"]) == 0.0 and float(first["loss/bc"]) == 0.0
    assert float(second["bc/coef"]) == pytest.approx(0.3)
    assert float(second["loss/bc"]) == pytest.approx(0.3 * float(second["bc/cross_entropy"]))


def test_the_bc_step_never_reads_the_host(ray_local) -> None:
    learner = _learner(0.5)
    flat = _batch(32, seed=13)
    step = learner._update_step(MODULE)
    step(flat, torch.arange(16))
    with host_reads_refused():
        metrics = step(flat, torch.arange(16, 32))
    assert metrics.shape == (len(step.metric_keys),) and step.metric_keys[-1] == "nonfinite"
    assert bool(torch.isfinite(metrics).all())


def test_advantages_are_standardized_over_the_students_steps(ray_local) -> None:
    """As `StudentAdvantages` on RLlib's path: the valid, not teacher-led steps set the mean
    and scale; teacher-led steps get 0; the columns travel with the steps."""
    learner = _learner(0.5)
    steps, rows = 6, 4
    rng = np.random.default_rng(14)
    valid = torch.tensor(rng.random((steps, rows)) < 0.8)
    modes = torch.tensor(rng.integers(0, 3, (steps, rows)))
    rollout = RolloutBatch(
        module_id=MODULE,
        obs=torch.randn(steps, rows, OBS_DIM),
        last_obs=torch.randn(rows, OBS_DIM),
        final_obs=None,
        actions=torch.randint(0, ACTIONS, (steps, rows)),
        logp=torch.full((steps, rows), -1.0),
        logits=torch.zeros(steps, rows, ACTIONS),
        rewards=torch.randn(steps, rows),
        terminated=torch.zeros(steps, rows, dtype=torch.bool),
        ended=torch.zeros(steps, rows, dtype=torch.bool),
        valid=valid,
        num_env_steps=steps * rows,
        columns={BC_MODE: modes, TEACHER_ACTION: torch.randint(0, ACTIONS, (steps, rows))},
    )
    plain = flat_batch(
        learner.module[MODULE],
        dataclasses.replace(rollout, columns={}),
        gamma=0.99,
        lambda_=0.95,
    )
    with_bc = flat_batch(learner.module[MODULE], rollout, gamma=0.99, lambda_=0.95)
    index = valid.reshape(-1).nonzero()[:, 0]
    flat_modes = modes.reshape(-1)[index]
    student = flat_modes != BCMode.TEACHER_LED
    want = standardize_advantages(plain.advantages, mask=student)
    torch.testing.assert_close(with_bc.advantages, want, rtol=1e-5, atol=1e-5)
    assert torch.equal(with_bc.bc_mode, flat_modes)
    assert bool((with_bc.advantages[~student] == 0).all())
