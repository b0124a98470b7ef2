"""Keys that env runners (the stock multi-agent runner's callback and the array runner) and
learners log for the driver, which turns them into `train/...`, `loss/...`, `league/...` and
`actions/...` metrics (`rl_platform.run.metrics`), and the metrics.jsonl keys read beyond the
loop that writes them. Plain strings, so every side stays free of Ray and torch imports.
"""

from typing import NamedTuple

RETURN_MEAN = "train/episode_return_mean"
"""metrics.jsonl: the trained module's mean return over the last 100 episodes."""

BC_COEF = "bc/coef"
"""metrics.jsonl: the weight of the BC term in this iteration's update (`bc:`, its schedule);
0 or absent when none. The health check reads it (`rl_platform.run.health`)."""

EVAL_PREFIX = "eval/"
"""metrics.jsonl: every metric of evaluation during training (`rl_platform.run.periodic_eval`)."""

LEARNER_RETURN_MEAN = "learner_episode_return_mean"
"""The trained module's own episode return, one sample per seat it played (multi-agent runs);
becomes `train/episode_return_mean`. RLlib's `episode_return_mean` sums every agent's return,
which in a zero-sum league is about 0 whoever wins."""

ACTION_COUNTS = "action_counts"
"""`action_counts/<index>`: how often the trained module took each discrete action in the
iteration (summed); becomes `actions/<name>_frac`, which sums to 1."""

MODULE_RETURN_MEAN = "module_episode_returns_mean"
"""RLlib's per-module returns (ray/rllib/utils/metrics/__init__.py); the modules other than the
trained one become `league/return_mean/<module>`."""


class PPOQuantity(NamedTuple):
    """One PPO quantity under its three names, one per stage it passes."""

    term: str
    """Its key in `ppo_loss`'s output (rl_platform/losses/ppo.py); `total_loss` is the sum of
    the `loss_*` terms, which the learner takes."""
    result_key: str
    """Its key in a learner's results: RLlib's `PPOTorchLearner` name, which the array learner
    (rl_platform/learners/update_step.py) logs too."""
    metric: str | None
    """Its key in the run's metrics (metrics.jsonl, TensorBoard, W&B); None: learner results
    only."""


POLICY_LOSS = PPOQuantity("loss_policy", "policy_loss", "loss/policy")
"""The clipped surrogate, negated: -mean(min(r A, clip(r, 1 - eps, 1 + eps) A))."""
VALUE_LOSS = PPOQuantity("vf_loss", "vf_loss", "loss/value")
"""The squared value error clipped at `vf_clip_param`, its mean, before `vf_loss_coeff`."""
VALUE_LOSS_UNCLIPPED = PPOQuantity("vf_loss_unclipped", "vf_loss_unclipped", None)
"""The squared value error's mean, unclipped."""
KL_LOSS = PPOQuantity("mean_kl_loss", "mean_kl_loss", "loss/kl")
"""The acting policy's mean KL to the current one, before the (adaptive) `kl_coeff`; 0 with
`training.use_kl_loss: false`."""
TOTAL_LOSS = PPOQuantity("total_loss", "total_loss", "loss/total")
"""What the optimizer minimizes: every term times its coefficient, summed (BC's included)."""
ENTROPY = PPOQuantity("entropy", "entropy", "train/entropy")
"""The policy's mean entropy; the loss's bonus is -`entropy_coeff` times it."""
APPROX_KL = PPOQuantity("approx_kl", "approx_kl", "train/approx_kl")
"""CleanRL's k3 estimate of the KL from the acting policy, E[(r - 1) - log r]."""
CLIP_FRAC = PPOQuantity("clip_frac", "clip_frac", "train/clip_frac")
"""The fraction of steps whose probability ratio left [1 - eps, 1 + eps]."""
VF_EXPLAINED_VAR = PPOQuantity("vf_explained_var", "vf_explained_var", "train/vf_explained_var")
"""1 - Var[targets - values] / Var[targets], floored at -1."""
PPO_QUANTITIES = (
    *(POLICY_LOSS, VALUE_LOSS, VALUE_LOSS_UNCLIPPED, KL_LOSS, TOTAL_LOSS),
    *(ENTROPY, APPROX_KL, CLIP_FRAC, VF_EXPLAINED_VAR),
)
"""Every PPO quantity both learner paths log, each with one name per stage: `ppo_loss` emits
each term once, both learners log the same result keys (RLlib's), and the run reports each
under one metric key. `loss/...` are the objective's terms before their coefficients (so runs
with other coefficients compare) and their weighted sum `loss/total`; `train/...` are
diagnostics of the update."""
