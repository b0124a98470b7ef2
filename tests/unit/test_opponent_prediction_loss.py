"""The auxiliary opponent-prediction loss: step t is scored against the frame at t + 1, only
where both steps are real and the frame is not padding."""

import torch

from rl_platform.losses.opponent_prediction import opponent_prediction_loss


def _frames() -> torch.Tensor:
    return torch.arange(2 * 4 * 3, dtype=torch.float32).reshape(2, 4, 3)


def test_a_perfect_prediction_of_the_next_frame_costs_nothing() -> None:
    frames = _frames()
    prediction = torch.zeros_like(frames)
    prediction[:, :-1] = frames[:, 1:]
    prediction[:, -1] = 99.0  # the last step has no next frame in the chunk: never scored
    loss = opponent_prediction_loss(
        prediction=prediction, frames=frames, frame_valid=torch.ones(2, 4)
    )
    assert loss.item() == 0.0


def test_padding_frames_and_masked_steps_are_not_scored() -> None:
    frames = _frames()
    prediction = torch.zeros_like(frames, requires_grad=True)
    target = prediction.detach().clone()
    target[:, :-1] = frames[:, 1:]
    frame_valid = torch.ones(2, 4)
    frame_valid[0, 2] = 0.0  # the frame at t = 2 of row 0 is padding: pair (1, 2) dropped
    loss_mask = torch.ones(2, 4, dtype=torch.bool)
    loss_mask[1, 3] = False  # row 1 ends at t = 2: pair (2, 3) dropped
    wrong = target.clone()
    wrong[0, 1] += 5.0
    wrong[1, 2] += 5.0
    loss = opponent_prediction_loss(
        prediction=wrong, frames=frames, frame_valid=frame_valid, loss_mask=loss_mask
    )
    assert loss.item() == 0.0
    wrong[0, 0] += 3.0  # a scored pair: squared error 9 on every feature, 1 of 4 valid pairs
    loss = opponent_prediction_loss(
        prediction=wrong, frames=frames, frame_valid=frame_valid, loss_mask=loss_mask
    )
    assert loss.item() == 9.0 / 4


def test_the_gradient_reaches_the_prediction_not_the_targets() -> None:
    frames = _frames().requires_grad_(True)
    prediction = torch.zeros(2, 4, 3, requires_grad=True)
    opponent_prediction_loss(
        prediction=prediction, frames=frames, frame_valid=torch.ones(2, 4)
    ).backward()
    assert frames.grad is None
    assert prediction.grad[:, :-1].abs().sum() > 0
    assert prediction.grad[:, -1].abs().sum() == 0


def test_a_one_step_chunk_gives_zero() -> None:
    loss = opponent_prediction_loss(
        prediction=torch.ones(2, 1, 3), frames=torch.zeros(2, 1, 3), frame_valid=torch.ones(2, 1)
    )
    assert loss.item() == 0.0
