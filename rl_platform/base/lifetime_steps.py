"""Where a run's lifetime env-step count comes from: the one reader (no Ray).

RLlib 2.60 counts sampled env steps in the algorithm's `MetricsLogger` under the env-runner
results, `(env_runners, num_env_steps_sampled_lifetime)`; some algorithms (offline BC) log the
count at the top level instead. `Algorithm.train()` copies it to the top of each iteration's
result dict (ray/rllib/algorithms/algorithm.py, "if NUM_ENV_STEPS_SAMPLED_LIFETIME not in
results"). Metrics, the league, BC's schedule, evaluation cadence and resume all count env
steps, and all of them read it here.
"""

import math
from collections.abc import Mapping
from typing import Any

ENV_RUNNER_RESULTS = "env_runners"
"""RLlib's `ENV_RUNNER_RESULTS` (ray/rllib/utils/metrics/__init__.py), spelled out."""
NUM_ENV_STEPS_SAMPLED_LIFETIME = "num_env_steps_sampled_lifetime"
"""RLlib's `NUM_ENV_STEPS_SAMPLED_LIFETIME`; the array runner logs it under this key too."""
_PLACES = ((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), NUM_ENV_STEPS_SAMPLED_LIFETIME)
"""Where the count is kept, most specific first."""


def _count(value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) and number > 0 else 0


def lifetime_env_steps(result: Mapping[str, Any]) -> int:
    """The count in an iteration's result dict: at its top, else under the env-runner
    results (a callback may see the dict before RLlib copies it up); 0 when absent."""
    top = _count(result.get(NUM_ENV_STEPS_SAMPLED_LIFETIME))
    if top:
        return top
    env_runners = result.get(ENV_RUNNER_RESULTS) or {}
    return _count(env_runners.get(NUM_ENV_STEPS_SAMPLED_LIFETIME))


def logged_lifetime_env_steps(metrics: Any) -> int:
    """The count in an algorithm's `MetricsLogger` (`algo.metrics`, None before it has one);
    0 when nothing is logged yet, e.g. right after a restore."""
    if metrics is None:
        return 0
    for place in _PLACES:
        count = _count(metrics.peek(place, default=0))
        if count:
            return count
    return 0
