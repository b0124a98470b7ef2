"""The policy-inference loss: cross-entropy against the opponent's action, only at steps that
are real and labelled; and the runner's labels (rollout.record_opponent_actions)."""

import math

import numpy as np
import torch

from rl_platform.losses.opponent_action import (
    NO_OPPONENT_ACTION,
    OPPONENT_ACTIONS,
    opponent_action_loss,
)
from rl_platform.sampling.rollout import RolloutArrays, record_opponent_actions


def test_a_confident_right_guess_costs_almost_nothing_and_scores_full_accuracy() -> None:
    actions = torch.tensor([[0, 2, 1]])
    logits = torch.nn.functional.one_hot(actions, 3).float() * 50.0
    loss, accuracy = opponent_action_loss(logits=logits, actions=actions)
    assert loss.item() < 1e-6
    assert accuracy.item() == 1.0


def test_unlabelled_and_masked_steps_are_not_scored() -> None:
    logits = torch.zeros(1, 4, 3, requires_grad=True)  # uniform: ln 3 per scored step
    actions = torch.tensor([[1, NO_OPPONENT_ACTION, 2, 0]])
    loss_mask = torch.tensor([[True, True, True, False]])
    loss, _ = opponent_action_loss(logits=logits, actions=actions, loss_mask=loss_mask)
    assert math.isclose(loss.item(), math.log(3), rel_tol=1e-6)
    loss.backward()
    scored = logits.grad.abs().sum(dim=-1)[0]
    assert scored[0] > 0 and scored[2] > 0
    assert scored[1] == 0 and scored[3] == 0  # no label; beyond the episode's end


def test_nothing_labelled_gives_zero_with_a_gradient_path() -> None:
    logits = torch.randn(2, 3, 4, requires_grad=True)
    actions = torch.full((2, 3), NO_OPPONENT_ACTION)
    loss, accuracy = opponent_action_loss(logits=logits, actions=actions)
    assert loss.item() == 0.0 and accuracy.item() == 0.0
    loss.backward()  # does not raise


def test_the_runner_labels_each_decision_with_the_other_seats_action() -> None:
    arrays = RolloutArrays.allocate(steps=2, obs=np.zeros((3, 2, 1), np.float32), num_games=3)
    # Row 1: game 0 both seats decided; game 1 only seat 1 (seat 0 is scripted); game 2
    # only seat 0, while seat 1 waits its turn.
    arrays.decided[1] = [[True, True], [False, True], [True, False]]
    actions = np.asarray([[4, 5], [6, 7], [8, 9]])
    acting = np.asarray([[True, True], [True, True], [True, False]])
    record_opponent_actions(arrays, 1, actions, acting)
    labels = arrays.extras[OPPONENT_ACTIONS][1]
    assert labels[0].tolist() == [5, 4]
    assert labels[1, 1] == 6  # a scripted opponent's action is a label too
    assert labels[2, 0] == NO_OPPONENT_ACTION  # the other seat did not act
