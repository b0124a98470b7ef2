"""The PPO terms of rl_platform/losses/ppo.py by hand, and decoupled PPO's weights (no Ray)."""

import math

import pytest
import torch

from rl_platform.losses.ppo import ppo_loss, total_loss


def _inputs(**overrides):
    logits = torch.tensor([[0.0, 0.0], [1.0, -1.0], [0.5, 0.5]])
    base = {
        "logits": logits,
        "actions": torch.tensor([0, 1, 1]),
        "logp_old": torch.log(torch.tensor([0.4, 0.2, 0.5])),
        "advantages": torch.tensor([1.0, -2.0, 0.5]),
        "values": torch.tensor([0.0, 1.0, 5.0]),
        "value_targets": torch.tensor([1.0, 1.0, 0.0]),
        "weights": torch.tensor([1.0, 1.0, 0.0]),
        "clip_param": 0.2,
        "vf_clip_param": 10.0,
        "vf_loss_coeff": 0.5,
        "entropy_coeff": 0.01,
    }
    return base | overrides


def test_the_terms_by_hand() -> None:
    terms = ppo_loss(**_inputs())
    # step 0: p = 0.5, ratio 0.5/0.4 = 1.25 -> clipped at 1.2 (A > 0): 1.2
    # step 1: p = sigmoid(-2) = 0.1192, ratio 0.596 -> clipped at 0.8 (A < 0): min(-1.192, -1.6)
    p1 = 1 / (1 + math.exp(2.0))
    surrogate = [1.2 * 1.0, min(-2.0 * p1 / 0.2, -2.0 * 0.8)]
    assert float(terms["loss_policy"]) == pytest.approx(-sum(surrogate) / 2, rel=1e-5)
    assert float(terms["loss_value"]) == pytest.approx(0.5 * (1.0 + 0.0) / 2, rel=1e-5)
    entropy0 = math.log(2.0)
    entropy1 = -(p1 * math.log(p1) + (1 - p1) * math.log(1 - p1))
    assert float(terms["entropy"]) == pytest.approx((entropy0 + entropy1) / 2, rel=1e-5)
    assert float(terms["loss_entropy"]) == pytest.approx(
        -0.01 * (entropy0 + entropy1) / 2, rel=1e-5
    )
    assert float(terms["clip_frac"]) == pytest.approx(1.0)  # both weighted steps left the range
    assert float(total_loss(terms)) == pytest.approx(
        float(terms["loss_policy"] + terms["loss_value"] + terms["loss_entropy"]), rel=1e-6
    )


def test_total_loss_of_one_term_is_that_term_with_its_gradient() -> None:
    x = torch.tensor([1.5, -2.0], requires_grad=True)
    lone = (x**2).mean()
    total = total_loss({"loss_td": lone, "q_mean": torch.tensor(9.0)})
    assert torch.equal(total, lone)
    total.backward()
    assert x.grad.tolist() == [1.5, -2.0]  # d/dx mean(x^2) = x
    # A term that is not 0-d still sums to a scalar, as more terms do.
    assert total_loss({"loss_a": torch.tensor([0.5])}).dim() == 0
    assert float(total_loss({"loss_a": lone, "loss_b": torch.tensor(0.25)}).detach()) == 3.375


def test_unit_behaviour_weights_are_ppo_and_others_scale_the_surrogate() -> None:
    plain = ppo_loss(**_inputs())
    ones = ppo_loss(**_inputs(behaviour_weights=torch.ones(3)))
    for key in ("loss_policy", "loss_value", "loss_entropy"):
        assert torch.equal(plain[key], ones[key])
    halved = ppo_loss(**_inputs(behaviour_weights=torch.full((3,), 0.5)))
    assert float(halved["loss_policy"]) == pytest.approx(0.5 * float(plain["loss_policy"]))
    assert torch.equal(halved["loss_value"], plain["loss_value"])


def test_the_kl_term_is_the_acting_policys_kl_to_the_current_one() -> None:
    old_logits = torch.tensor([[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]])
    terms = ppo_loss(**_inputs(old_logits=old_logits, kl_coeff=0.3))
    p_old = torch.softmax(old_logits, -1)
    kl = (
        p_old * (torch.log_softmax(old_logits, -1) - torch.log_softmax(_inputs()["logits"], -1))
    ).sum(-1)
    want = float(kl[:2].mean())
    assert float(terms["mean_kl_loss"]) == pytest.approx(want, rel=1e-5)
    assert float(terms["loss_kl"]) == pytest.approx(0.3 * want, rel=1e-5)
