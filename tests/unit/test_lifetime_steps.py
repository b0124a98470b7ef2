"""Lifetime env steps are read in one place, from a result dict or from RLlib's metrics."""

import math

from rl_platform.base.lifetime_steps import lifetime_env_steps, logged_lifetime_env_steps


class _Metrics:
    """RLlib's MetricsLogger as far as the reader uses it: `peek(key, default=...)`."""

    def __init__(self, values: dict) -> None:
        self.values = values

    def peek(self, key, default=None):
        return self.values.get(key, default)


def test_a_result_dict_gives_its_top_level_count_else_the_env_runners_one():
    assert lifetime_env_steps({"num_env_steps_sampled_lifetime": 4000}) == 4000
    assert lifetime_env_steps({"env_runners": {"num_env_steps_sampled_lifetime": 300}}) == 300
    assert lifetime_env_steps({"env_runners": {}}) == 0
    assert lifetime_env_steps({"num_env_steps_sampled_lifetime": math.nan}) == 0


def test_metrics_give_the_env_runner_count_first_then_the_top_level_one():
    nested = ("env_runners", "num_env_steps_sampled_lifetime")
    both = _Metrics({nested: 500, "num_env_steps_sampled_lifetime": 7})
    assert logged_lifetime_env_steps(both) == 500
    assert logged_lifetime_env_steps(_Metrics({"num_env_steps_sampled_lifetime": 7})) == 7
    assert logged_lifetime_env_steps(_Metrics({nested: math.inf})) == 0
    assert logged_lifetime_env_steps(None) == 0
