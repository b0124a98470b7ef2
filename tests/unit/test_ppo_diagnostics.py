import math

import torch

from rl_platform.learners.gradients import all_finite
from rl_platform.losses.ppo_diagnostics import ppo_diagnostics


def test_clip_frac_and_approx_kl_match_hand_computation():
    logp_old = torch.zeros(4)
    logp_new = torch.log(torch.tensor([1.0, 1.1, 1.5, 0.5]))  # ratios 1.0, 1.1, 1.5, 0.5
    out = ppo_diagnostics(logp_new=logp_new, logp_old=logp_old, clip_param=0.2)
    assert out["clip_frac"].item() == 0.5  # 1.5 and 0.5 leave [0.8, 1.2]
    expected_kl = sum((r - 1) - math.log(r) for r in (1.0, 1.1, 1.5, 0.5)) / 4
    assert abs(out["approx_kl"].item() - expected_kl) < 1e-6


def test_mask_excludes_padding():
    logp_new = torch.log(torch.tensor([2.0, 1.0]))
    mask = torch.tensor([False, True])
    out = ppo_diagnostics(logp_new=logp_new, logp_old=torch.zeros(2), clip_param=0.2, mask=mask)
    assert out["clip_frac"].item() == 0.0 and abs(out["approx_kl"].item()) < 1e-7


def test_all_finite():
    assert all_finite([torch.ones(2), None])
    assert not all_finite({"a": torch.tensor([1.0, float("nan")])})


def test_all_finite_finds_one_inf_among_many_tensors():
    tensors = [torch.ones(3, 3) for _ in range(20)]
    assert all_finite(tensors)
    tensors[13][1, 2] = float("inf")
    assert not all_finite(tensors)
    assert all_finite([])
