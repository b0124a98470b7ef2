"""Map RLlib's nested result dict to rl_platform's namespaced metric keys (pure, no Ray).

The same names go to metrics.jsonl, TensorBoard and W&B.
"""

import math
from collections.abc import Sequence
from typing import Any

from rl_platform.base.lifetime_steps import lifetime_env_steps
from rl_platform.base.metric_keys import (
    ACTION_COUNTS,
    LEARNER_RETURN_MEAN,
    MODULE_RETURN_MEAN,
    PPO_QUANTITIES,
)
from rl_platform.base.module_ids import TRAINED_MODULE_IDS, trained_module_in
from rl_platform.learners import HEALTH_NONFINITE_KEY

# RLlib learner result key -> our name, for the main module: PPO's from its one table (both
# learner paths log the same result keys), then the other algorithms'.
_LEARNER_KEYS = {
    **{q.result_key: q.metric for q in PPO_QUANTITIES if q.metric is not None},
    "qf_loss": "train/qf_loss",
    "actor_loss": "train/actor_loss",
    "alpha_loss": "train/alpha_loss",
    "alpha_value": "train/alpha",
}
REWARD_PREFIX = "reward/"
CUSTOM_PREFIXES = (
    *(REWARD_PREFIX, "actions/", "league/", "bc/", "curriculum/", "loss/", "train/"),
    *("sac/", "dqn/", "gradients/"),
)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number


def main_module_results(learners: dict[str, Any]) -> dict[str, Any]:
    modules = [k for k, v in learners.items() if k != "__all_modules__" and isinstance(v, dict)]
    module_id = trained_module_in(modules, fallback_to_first=True)
    return learners[module_id] if module_id is not None else {}


def _learner_metrics(learners: dict[str, Any]) -> dict[str, float]:
    """The main module's learner results under our keys.

    A key the learner did not log this iteration still reduces to NaN in RLlib's metrics
    logger when its stats object exists: one restored from a checkpoint written by a version
    that logged other keys (PPO's `loss/policy` before #58 made it a mapped key) stays NaN
    forever. So a namespaced key passes through only with a finite value, and never over a
    mapped one. A truly non-finite update is not lost by this: every learner reports it under
    `health/nonfinite_update` (rl_platform/learners/finite_guard.py and the array steps)."""
    module = main_module_results(learners)
    passed = {
        key: number
        for key, value in module.items()
        if isinstance(key, str) and key.startswith(CUSTOM_PREFIXES)
        if (number := _number(value)) is not None and math.isfinite(number)
    }
    out = passed | {
        name: _number(module[key]) for key, name in _LEARNER_KEYS.items() if key in module
    }
    lr_keys = [k for k in module if k.endswith("_learning_rate")]
    if lr_keys:
        out["train/lr"] = _number(module[lr_keys[0]])
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


def _other_module_returns(env_runners: dict[str, Any]) -> dict[str, float]:
    """`league/return_mean/<module>` for every module but the trained one."""
    modules = env_runners.get(MODULE_RETURN_MEAN)
    if not isinstance(modules, dict):
        return {}
    out = {}
    for module_id, value in modules.items():
        number = _number(value)
        if module_id not in TRAINED_MODULE_IDS and number is not None:
            out[f"league/return_mean/{module_id}"] = number
    return out


def action_fractions(counts: Any, action_names: Sequence[str] = ()) -> dict[str, float]:
    """`actions/<name>_frac` from the iteration's `action_counts/<index>` (sums to 1); every
    named action is reported, 0 when it was never taken."""
    if not isinstance(counts, dict):
        return {}
    by_index = {int(index): _number(count) or 0.0 for index, count in counts.items()}
    total = sum(by_index.values())
    if total <= 0:
        return {}
    indices = sorted(set(by_index) | set(range(len(action_names))))
    names = {i: action_names[i] if i < len(action_names) else str(i) for i in indices}
    return {f"actions/{names[i]}_frac": by_index.get(i, 0.0) / total for i in indices}


def extract_metrics(
    result: dict[str, Any], *, previous_env_steps: int, action_names: Sequence[str] = ()
) -> dict[str, float]:
    """One flat dict of namespaced metrics for one training iteration. In multi-agent runs
    `train/episode_return_mean` is the trained module's own return (`LEARNER_RETURN_MEAN`)."""
    env_runners = result.get("env_runners", {}) or {}
    learners = result.get("learners", {}) or {}
    env_steps = lifetime_env_steps(result)
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
    learner_return = _number(env_runners.get(LEARNER_RETURN_MEAN))
    if learner_return is not None:
        metrics["train/episode_return_mean"] = learner_return
    metrics |= _other_module_returns(env_runners)
    metrics |= _learner_metrics(learners)
    metrics |= _custom_env_runner_metrics(env_runners)
    metrics |= action_fractions(env_runners.get(ACTION_COUNTS), action_names)
    return metrics


def is_nonfinite_update(metrics: dict[str, float]) -> bool:
    """True when a learner refused a NaN/Inf step or a reported loss is NaN/Inf.

    Reward components are not losses, whatever their names: the duel's `reward/win_loss` is
    NaN in an iteration in which no game ended (nothing to average), not a broken update."""
    if metrics.get(HEALTH_NONFINITE_KEY, 0.0) > 0.0:
        return True
    losses = [
        v
        for k, v in metrics.items()
        if (k.endswith("_loss") or k.startswith("loss/")) and not k.startswith(REWARD_PREFIX)
    ]
    return any(not math.isfinite(v) for v in losses)
