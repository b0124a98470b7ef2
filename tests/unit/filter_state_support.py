"""A MeanStdFilter's state as RLlib's `Algorithm.get_state()` holds it, built by hand for the
unit tests of rl_platform/rllib/filter_state.py and rl_platform/policies/observation_filter.py."""

import base64
import io
import zlib

import numpy as np

FILTER_PATH = ("env_runner", "env_to_module_connector", "MeanStdFilter")
WHERE = "/".join(FILTER_PATH)


def rllib_string(array: np.ndarray) -> str:
    """RLlib's `_serialize_ndarray`, by hand: np.save (pickle allowed) -> zlib -> base64."""
    buffer = io.BytesIO()
    np.save(buffer, array)
    return base64.b64encode(zlib.compress(buffer.getvalue())).decode("ascii")


def stat(values: list[list[float]], encode=rllib_string) -> dict:
    """RunningStat's state after pushing `values` (Welford, as RLlib's `push`)."""
    x = np.asarray(values, dtype=np.float64)
    mean = x.mean(axis=0)
    sum_sq = ((x - mean) ** 2).sum(axis=0)
    return {
        "num_pushes": len(x),
        "num_pushes_delta": 0,
        "mean_array": encode(mean),
        "mean_delta_array": encode(np.zeros_like(mean)),
        "sum_sq_diff_array": encode(sum_sq),
        "sum_sq_diff_delta_array": encode(np.zeros_like(mean)),
    }


def algorithm_state(running: dict, *, agents=(None,), width: int = 2) -> dict:
    """The shape of `Algorithm.get_state()` around a MeanStdFilter of a Box of `width`."""
    agent_state = {
        "shape": np.array([width]),
        "de_mean_to_zero": True,
        "de_std_to_one": True,
        "clip_by_value": 10.0,
        "running_stats": [running],
    }
    connector = {"MeanStdFilter": {agent: dict(agent_state) for agent in agents}}
    return {
        "env_runner": {"env_to_module_connector": connector, "num_env_steps_sampled_lifetime": 3},
        "learner_group": {"learner": {"rl_module": {"default_policy": {"w": np.ones(2)}}}},
    }


def running_stat(state: dict, agent=None) -> dict:
    node = state
    for key in FILTER_PATH:
        node = node[key]
    return node[agent]["running_stats"][0]


VALUES = [[1.0, 10.0], [3.0, 10.0], [5.0, 16.0]]
