"""The BC + PPO loss terms against hand-computed values, and the PPO term's exclusion of
teacher-led steps inside the real `BCPPOLearner` (built locally, no Ray cluster)."""

import math
from functools import partial

import pytest
import torch

from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode
from rl_platform.losses.bc import (
    bc_terms,
    labelled_mask,
    ppo_loss_mask,
    standardize_advantages,
    total_loss,
)
from tests.unit.bc_learner_support import bc_batch, build_bc_learner

T, S, P = BCMode.TEACHER_LED, BCMode.STUDENT_LED, BCMode.PLAIN


def test_bc_cross_entropy_accuracy_and_fractions_by_hand():
    logits = torch.tensor(
        [
            [0.0, 0.0],  # teacher-led, label 1: p = 1/2, argmax 0 (wrong)
            [math.log(3.0), 0.0],  # student-led, label 0: p = 3/4, argmax 0 (right)
            [0.0, 10.0],  # plain: no BC
            [5.0, -5.0],  # padding (loss mask False)
        ]
    )
    out = bc_terms(
        logits=logits,
        teacher_actions=torch.tensor([1, 0, 0, 1]),
        bc_mode=torch.tensor([T, S, P, T]),
        coef=0.5,
        loss_mask=torch.tensor([True, True, True, False]),
    )
    cross_entropy = (math.log(2.0) + math.log(4.0 / 3.0)) / 2
    assert out["bc_cross_entropy"].item() == pytest.approx(cross_entropy, rel=1e-6)
    assert out["loss_bc"].item() == pytest.approx(0.5 * cross_entropy, rel=1e-6)
    assert out["bc_accuracy"].item() == pytest.approx(0.5)
    assert out["bc_teacher_led_frac"].item() == pytest.approx(1 / 3)
    assert out["bc_student_led_frac"].item() == pytest.approx(1 / 3)
    assert out["bc_labelled_steps"].item() == 2


def test_bc_term_is_zero_without_labels_and_keeps_the_graph():
    logits = torch.zeros(3, 4, requires_grad=True)
    out = bc_terms(
        logits=logits,
        teacher_actions=torch.zeros(3, dtype=torch.long),
        bc_mode=torch.tensor([P, P, P]),
        coef=1.0,
    )
    assert out["loss_bc"].item() == 0.0
    out["loss_bc"].backward()  # no NaN, no "does not require grad"
    assert torch.isfinite(logits.grad).all()


def test_bc_term_handles_a_time_axis():
    logits = torch.tensor([[[0.0, math.log(3.0)], [0.0, 0.0]]])  # [B=1, T=2, A=2]
    out = bc_terms(
        logits=logits,
        teacher_actions=torch.tensor([[1, 0]]),
        bc_mode=torch.tensor([[S, T]]),
        coef=1.0,
        loss_mask=torch.tensor([[True, False]]),  # second step is padding
    )
    assert out["loss_bc"].item() == pytest.approx(-math.log(0.75), rel=1e-6)


def test_masks():
    bc_mode = torch.tensor([T, S, P, T])
    loss_mask = torch.tensor([True, True, True, False])
    assert ppo_loss_mask(bc_mode=bc_mode, loss_mask=loss_mask).tolist() == [0, 1, 1, 0]
    assert ppo_loss_mask(bc_mode=bc_mode, loss_mask=None).tolist() == [0, 1, 1, 0]
    assert labelled_mask(bc_mode=bc_mode, loss_mask=loss_mask).tolist() == [1, 1, 0, 0]


def test_standardize_advantages_over_the_mask_only():
    advantages = torch.tensor([100.0, 1.0, 3.0, -7.0])
    mask = torch.tensor([False, True, True, False])
    out = standardize_advantages(advantages, mask=mask)
    # Over {1, 3}: mean 2, population std 1.
    assert out.tolist() == pytest.approx([0.0, -1.0, 1.0, 0.0])
    # Affine invariance: standardizing an already standardized vector gives the same result.
    shifted = standardize_advantages(advantages * 3.0 + 5.0, mask=mask)
    assert shifted.tolist() == pytest.approx(out.tolist())
    assert (
        standardize_advantages(advantages, mask=torch.zeros(4, dtype=torch.bool)).abs().sum() == 0
    )


def test_total_loss_sums_only_loss_terms():
    terms = {"loss_ppo": torch.tensor(1.5), "loss_bc": torch.tensor(0.25), "bc_accuracy": 9.0}
    assert total_loss(terms).item() == pytest.approx(1.75)
    with pytest.raises(ValueError):
        total_loss({"bc_accuracy": torch.tensor(1.0)})


# ----- the real learner -------------------------------------------------------------------
@pytest.fixture(scope="module")
def learner():
    return build_bc_learner(
        bc={"coef": 0.7}, training={"entropy_coeff": 0.01, "vf_clip_param": 1000.0}
    )


def _loss(learner, batch: dict[str, torch.Tensor], method=None) -> float:
    module_id = "default_policy"
    module = learner.module[module_id]
    fwd_out = module.forward_train(batch)
    method = method or learner.compute_loss_for_module
    kwargs = {"module_id": module_id, "config": learner.config, "batch": batch, "fwd_out": fwd_out}
    with torch.no_grad():
        return float(method(**kwargs))


def test_teacher_led_steps_do_not_enter_the_ppo_term(learner):
    batch = bc_batch()
    teacher_led = batch[BC_MODE] == T
    base = _loss(learner, batch)

    changed = dict(batch)
    changed["advantages"] = torch.where(
        teacher_led, batch["advantages"] + 50.0, batch["advantages"]
    )
    changed["value_targets"] = torch.where(teacher_led, torch.tensor(99.0), batch["value_targets"])
    changed["action_logp"] = torch.where(teacher_led, torch.tensor(-9.0), batch["action_logp"])
    assert _loss(learner, changed) == pytest.approx(base, abs=1e-6)

    # The same change on a student-led step does move the loss (the test can fail).
    student = batch[BC_MODE] == S
    moved = dict(batch)
    moved["advantages"] = torch.where(student, batch["advantages"] + 50.0, batch["advantages"])
    assert abs(_loss(learner, moved) - base) > 1e-3


def test_total_is_ppo_on_student_steps_plus_coef_times_cross_entropy(learner):
    from rl_platform.learners.ppo import PlatformPPOLearner

    batch = bc_batch()
    keep = batch[BC_MODE] != T
    student_only = {key: value[keep] for key, value in batch.items()}
    ppo = _loss(learner, student_only, partial(PlatformPPOLearner.compute_loss_for_module, learner))
    with torch.no_grad():
        logits = learner.module["default_policy"].forward_train(batch)["action_dist_inputs"]
        labelled = batch[BC_MODE] != P
        logp = torch.log_softmax(logits, -1)[labelled]
        cross_entropy = -logp.gather(1, batch[TEACHER_ACTION][labelled, None]).mean().item()
    assert _loss(learner, batch) == pytest.approx(ppo + 0.7 * cross_entropy, rel=1e-5)


def test_only_teacher_led_steps_give_a_finite_bc_only_loss(learner):
    batch = bc_batch()
    batch[BC_MODE] = torch.full_like(batch[BC_MODE], T)
    value = _loss(learner, batch)
    assert math.isfinite(value) and value > 0.0
