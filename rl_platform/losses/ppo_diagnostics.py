"""The weighted mean every loss reads, and PPO's `clip_frac` and `approx_kl`: the one
implementation of each, for `ppo_loss` (the array learner) and `PlatformPPOLearner` (RLlib's
path) alike.

Follows CleanRL's `ppo.py` (https://github.com/vwxyzjn/cleanrl): `approx_kl` is the low-variance
k3 estimator E[(r - 1) - log r] from http://joschu.net/blog/kl-approx.html, and `clip_frac` is the
fraction of samples whose probability ratio left [1 - eps, 1 + eps].
"""

import torch

from rl_platform.base.metric_keys import APPROX_KL, CLIP_FRAC


def masked_mean(values: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """The mean of `values` weighted by `mask` (bool, or 0/1 weights; None: the plain mean).
    Every tensor keeps its shape (no boolean indexing), as a captured CUDA graph needs; with
    no weight at all it is 0, not NaN."""
    if mask is None:
        return values.mean()
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp_min(1.0)


@torch.no_grad()
def ppo_diagnostics(
    *,
    logp_new: torch.Tensor,
    logp_old: torch.Tensor,
    clip_param: float,
    mask: torch.Tensor | None = None,
) -> dict[str, torch.Tensor]:
    """Return `clip_frac` and `approx_kl` for one minibatch."""
    log_ratio = logp_new - logp_old
    ratio = log_ratio.exp()
    clipped = ((ratio - 1.0).abs() > clip_param).to(log_ratio.dtype)
    approx_kl = (ratio - 1.0) - log_ratio
    return {
        CLIP_FRAC.term: masked_mean(clipped, mask),
        APPROX_KL.term: masked_mean(approx_kl, mask),
    }
