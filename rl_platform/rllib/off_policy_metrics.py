"""The off-policy array path's iteration metrics, logged into the Algorithm's `MetricsLogger`
under the keys RLlib's own runners and learners use (RLlib adapter).

`env_runners/num_env_steps_sampled_lifetime` (a lifetime sum, restored with the Algorithm's
state), `num_env_steps_sampled`, `num_episodes`, and `episode_return_mean` /
`episode_len_mean` over the last 100 episodes (RLlib's `metrics_num_episodes_for_smoothing`,
as the spec's config sets it); the learner's means under `learners/<module>/` with our names
(`loss/...`, `sac/...`, `dqn/...`) and RLlib's (`qf_loss`, `actor_loss`, `alpha_loss`,
`alpha_value`, which rl_platform/run/metrics.py maps to `train/...`), and the non-finite
update flag under `learners/__all_modules__/`.
"""

from typing import Any

from rl_platform.base.lifetime_steps import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME
from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.sampling.transition_collector import TransitionCollector

LEARNER_RESULTS = "learners"
ALL_MODULES = "__all_modules__"
RLLIB_NAMES = {
    "loss/critic": "qf_loss",
    "loss/td": "qf_loss",
    "loss/actor": "actor_loss",
    "loss/alpha": "alpha_loss",
    "sac/alpha": "alpha_value",
}
"""Our metric -> the name RLlib's SAC/DQN learners log it under."""


def log_iteration(
    metrics: Any,
    *,
    env_steps: int,
    collector: TransitionCollector,
    learner_metrics: dict[str, float],
    module_id: str,
) -> None:
    """One iteration's metrics into `metrics` (the Algorithm's logger; module docstring)."""
    runners = ENV_RUNNER_RESULTS
    metrics.log_value((runners, NUM_ENV_STEPS_SAMPLED_LIFETIME), env_steps, reduce="lifetime_sum")
    metrics.log_value((runners, "num_env_steps_sampled"), env_steps, reduce="sum")
    metrics.log_value((runners, "num_episodes"), collector.drain_finished(), reduce="sum")
    means = collector.episode_means()
    if means is not None:
        metrics.log_value((runners, "episode_return_mean"), means[0], window=1)
        metrics.log_value((runners, "episode_len_mean"), means[1], window=1)
    if not learner_metrics:
        return
    nonfinite = learner_metrics.pop(HEALTH_NONFINITE_KEY, 0.0)
    named = {
        RLLIB_NAMES[key]: value for key, value in learner_metrics.items() if key in RLLIB_NAMES
    }
    for key, value in (learner_metrics | named).items():
        metrics.log_value((LEARNER_RESULTS, module_id, key), value, window=1)
    metrics.log_value((LEARNER_RESULTS, ALL_MODULES, HEALTH_NONFINITE_KEY), nonfinite, window=1)
