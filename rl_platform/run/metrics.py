"""Map RLlib's nested result dict to rl_platform's namespaced metric keys (pure, no Ray).

The same names go to metrics.jsonl, TensorBoard and W&B.
"""

import math
from typing import Any

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.module_ids import TRAINED_MODULE_IDS

# RLlib learner result key -> our name, for the main module.
_LEARNER_KEYS = {
    "entropy": "train/entropy",
    "approx_kl": "train/approx_kl",
    "clip_frac": "train/clip_frac",
    "policy_loss": "train/policy_loss",
    "vf_loss": "train/vf_loss",
    "vf_explained_var": "train/vf_explained_var",
    "total_loss": "train/total_loss",
    "mean_kl_loss": "train/kl_loss",
    "qf_loss": "train/qf_loss",
    "actor_loss": "train/actor_loss",
    "alpha_loss": "train/alpha_loss",
    "alpha_value": "train/alpha",
}
CUSTOM_PREFIXES = ("reward/", "actions/", "league/", "bc/", "curriculum/", "loss/")


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number


def main_module_results(learners: dict[str, Any]) -> dict[str, Any]:
    for module_id in TRAINED_MODULE_IDS:
        if isinstance(learners.get(module_id), dict):
            return learners[module_id]
    others = [v for k, v in learners.items() if k != "__all_modules__" and isinstance(v, dict)]
    return others[0] if others else {}


def _learner_metrics(learners: dict[str, Any]) -> dict[str, float]:
    module = main_module_results(learners)
    out = {name: _number(module[key]) for key, name in _LEARNER_KEYS.items() if key in module}
    lr_keys = [k for k in module if k.endswith("_learning_rate")]
    if lr_keys:
        out["train/lr"] = _number(module[lr_keys[0]])
    for key, value in module.items():
        if isinstance(key, str) and key.startswith(CUSTOM_PREFIXES):
            out[key] = _number(value)
    nonfinite = learners.get("__all_modules__", {}).get(HEALTH_NONFINITE_KEY)
    if nonfinite is not None:
        out[HEALTH_NONFINITE_KEY] = _number(nonfinite)
    return {k: v for k, v in out.items() if v is not None}


def _custom_env_runner_metrics(env_runners: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in env_runners.items():
        if isinstance(key, str) and key.startswith(CUSTOM_PREFIXES):
            number = _number(value)
            if number is not None:
                out[key] = number
    return out


def extract_metrics(result: dict[str, Any], *, previous_env_steps: int) -> dict[str, float]:
    """One flat dict of namespaced metrics for one training iteration."""
    env_runners = result.get("env_runners", {}) or {}
    learners = result.get("learners", {}) or {}
    env_steps = int(result.get("num_env_steps_sampled_lifetime", 0) or 0)
    iteration_s = float(result.get("time_this_iter_s", 0.0) or 0.0)
    metrics: dict[str, float] = {
        "iteration": float(result.get("training_iteration", 0)),
        "env_steps": float(env_steps),
        "perf/iteration_s": iteration_s,
        "perf/env_steps_per_s": (env_steps - previous_env_steps) / iteration_s
        if iteration_s
        else 0.0,
    }
    for src, name in (
        ("episode_return_mean", "train/episode_return_mean"),
        ("episode_len_mean", "train/episode_len_mean"),
        ("num_episodes", "train/num_episodes"),
    ):
        number = _number(env_runners.get(src))
        if number is not None:
            metrics[name] = number
    metrics |= _learner_metrics(learners)
    metrics |= _custom_env_runner_metrics(env_runners)
    return metrics


def is_nonfinite_update(metrics: dict[str, float]) -> bool:
    """True when a learner refused a NaN/Inf step or a reported loss is NaN/Inf."""
    if metrics.get(HEALTH_NONFINITE_KEY, 0.0) > 0.0:
        return True
    losses = [v for k, v in metrics.items() if k.endswith("_loss") or k.startswith("loss/")]
    return any(not math.isfinite(v) for v in losses)
