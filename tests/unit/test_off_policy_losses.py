"""SAC's and DQN's terms (rl_platform/losses/sac.py, dqn.py, bellman.py) against numbers
worked out by hand on two rows (the arithmetic is in the comments)."""

import math

import pytest
import torch

from rl_platform.losses.dqn import dqn_loss
from rl_platform.losses.sac import sac_loss


def t(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float32)


def sac_terms(**overrides) -> dict[str, torch.Tensor]:
    inputs = {
        "q_pred": t(1.0, 2.0),
        "q_twin_pred": t(1.5, 1.0),
        "q_target_next": t(3.0, -1.0),
        "logp_next": t(-1.0, 0.5),
        "q_policy": t(2.0, 4.0),
        "logp_policy": t(-2.0, 1.0),
        "log_alpha": torch.tensor([math.log(0.5)], requires_grad=True),
        "rewards": t(1.0, 0.0),
        "terminated": t(0.0, 1.0),
        "n_steps": t(1.0, 2.0),
        "weights": t(1.0, 0.5),
        "gamma": 0.9,
        "target_entropy": -1.0,
    }
    return sac_loss(**(inputs | overrides))


def test_sac_terms_by_hand():
    terms = sac_terms(critic_loss="huber")  # RLlib's; the squared error is checked below
    # alpha 0.5; soft next values 3 + 0.5 = 3.5 and -1 - 0.25 = -1.25;
    # targets 1 + 0.9 * 3.5 = 4.15 and 0 (terminated).
    assert float(terms["target_mean"]) == pytest.approx((4.15 + 0.0) / 2)
    # Errors -3.15, 2 -> Huber 2.65, 1.5 -> (1 * 2.65 + 0.5 * 1.5) / 2.
    assert float(terms["loss_critic"]) == pytest.approx(1.7)
    # Twin errors -2.65, 1 -> Huber 2.15, 0.5 -> (2.15 + 0.25) / 2.
    assert float(terms["loss_critic_twin"]) == pytest.approx(1.2)
    # mean(0.5 * [-2, 1] - [2, 4]) = mean(-3, -3.5).
    assert float(terms["loss_actor"]) == pytest.approx(-3.25)
    # -mean(log 0.5 * ([-2, 1] - 1)) = log(0.5) * 1.5.
    assert float(terms["loss_alpha"].detach()) == pytest.approx(math.log(0.5) * 1.5)
    # Twin: the two absolute errors averaged.
    assert terms["td_error"].tolist() == pytest.approx([(3.15 + 2.65) / 2, (2 + 1) / 2])
    assert float(terms["alpha"]) == pytest.approx(0.5)
    assert float(terms["logp_mean"]) == pytest.approx(-0.5)
    assert float(terms["q_mean"]) == pytest.approx(3.0)


def test_sac_with_one_critic_and_squared_errors():
    terms = sac_terms(q_twin_pred=None, critic_loss="mse")
    assert "loss_critic_twin" not in terms
    assert float(terms["loss_critic"]) == pytest.approx((3.15**2 + 0.5 * 2**2) / 2)
    assert terms["td_error"].tolist() == pytest.approx([3.15, 2.0])


def test_sac_temperature_gradient_is_in_log_space():
    log_alpha = torch.tensor([math.log(0.5)], requires_grad=True)
    sac_terms(log_alpha=log_alpha)["loss_alpha"].backward()
    # d/d log_alpha of -mean(log_alpha * (logp + target_entropy)) = -mean(-3, 0).
    assert log_alpha.grad.tolist() == pytest.approx([1.5])


def dqn_terms(**overrides) -> dict[str, torch.Tensor]:
    inputs = {
        "q_values": t(1.0, 2.0, 3.0, 0.0, -1.0, 5.0).reshape(2, 3),
        "actions": torch.tensor([2, 0]),
        "q_next_target": t(10.0, 20.0, 30.0, 4.0, 5.0, 6.0).reshape(2, 3),
        "q_next_online": t(0.0, 5.0, 1.0, 2.0, 1.0, 0.0).reshape(2, 3),
        "rewards": t(1.0, 2.0),
        "terminated": t(0.0, 0.0),
        "n_steps": t(1.0, 3.0),
        "weights": t(1.0, 2.0),
        "gamma": 0.5,
    }
    return dqn_loss(**(inputs | overrides))


def test_double_dqn_by_hand():
    terms = dqn_terms()
    # Online picks actions 1 and 0 at s'; the target values them 20 and 4;
    # y = 1 + 0.5 * 20 = 11 and 2 + 0.5^3 * 4 = 2.5; Q(s, a) = 3 and 0.
    assert terms["td_error"].tolist() == pytest.approx([8.0, 2.5])
    # Huber 7.5 and 2.0, weights 1 and 2: (7.5 + 4) / 2.
    assert float(terms["loss_td"]) == pytest.approx(5.75)
    assert float(terms["q_mean"]) == pytest.approx(1.5)


def test_dqn_without_double_q_takes_the_targets_maximum():
    terms = dqn_terms(q_next_online=None)
    # y = 1 + 0.5 * 30 = 16 and 2 + 0.125 * 6 = 2.75: Huber 12.5 and 2.25.
    assert float(terms["loss_td"]) == pytest.approx((12.5 + 2 * 2.25) / 2)


def test_dqn_termination_masks_the_bootstrap_and_mse_has_no_half():
    terms = dqn_terms(terminated=t(1.0, 0.0), loss="mse")
    # y = 1 and 2.5: errors 2 and -2.5.
    assert float(terms["loss_td"]) == pytest.approx((4.0 + 2 * 6.25) / 2)


def test_dqn_reads_a_masked_action_as_zero():
    q_values = t(1.0, -math.inf, 3.0, 0.0, -1.0, 5.0).reshape(2, 3)
    terms = dqn_terms(q_values=q_values, actions=torch.tensor([1, 0]))
    assert terms["td_error"].tolist() == pytest.approx([11.0, 2.5])
