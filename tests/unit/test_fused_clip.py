"""The learners' fused global-norm clip scales gradients as RLlib's `clip_gradients` does."""

import torch
from ray.rllib.utils.torch_utils import clip_gradients

from rl_platform.learners.finite_guard import fused_clip_gradients


def _grads(scale: float) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    return {f"p{i}": scale * torch.randn(4, 5) for i in range(6)}


def test_the_fused_clip_equals_rllibs_above_and_below_the_threshold():
    for scale in (0.01, 10.0):  # total norm below and above grad_clip = 1
        ours, theirs = _grads(scale), _grads(scale)
        norm = fused_clip_gradients(ours, grad_clip=1.0, grad_clip_by="global_norm")
        expected_norm = clip_gradients(theirs, grad_clip=1.0, grad_clip_by="global_norm")
        torch.testing.assert_close(norm, expected_norm)
        for name in ours:
            torch.testing.assert_close(ours[name], theirs[name])


def test_a_non_finite_gradient_poisons_every_gradient_for_the_guard():
    grads = _grads(1.0)
    grads["p3"][0, 0] = float("nan")
    fused_clip_gradients(grads, grad_clip=1.0, grad_clip_by="global_norm")
    assert all(torch.isnan(g).all() for g in grads.values())


def test_other_modes_are_rllibs():
    ours, theirs = _grads(5.0), _grads(5.0)
    fused_clip_gradients(ours, grad_clip=0.5, grad_clip_by="value")
    clip_gradients(theirs, grad_clip=0.5, grad_clip_by="value")
    for name in ours:
        torch.testing.assert_close(ours[name], theirs[name])
