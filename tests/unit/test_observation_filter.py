"""A run's observation filter applied outside RLlib (rl_platform/policies/observation_filter.py),
against RLlib's arithmetic worked by hand (tests/integration/test_filtered_eval.py compares it
with RLlib's own connector)."""

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.policies.observation_filter import ObservationFilter, observation_filter_in
from rl_platform.rllib import filter_state
from tests.unit.filter_state_support import VALUES, WHERE, algorithm_state, stat


def test_the_filter_applies_rllibs_arithmetic():
    """mean [3, 12]; unbiased var [8/2, 24/2] = [4, 12] as float32; (x - mean) / (std + 1e-6),
    clipped to 10."""
    state = filter_state.as_arrays(algorithm_state(stat(VALUES)))
    flt = observation_filter_in(state, where="t", label="run")
    assert flt is not None and flt.clip == 10.0
    np.testing.assert_allclose(flt.std, np.sqrt([4.0, 12.0]).astype(np.float32))
    obs = np.array([[5.0, 12.0], [3.0, 1000.0]], dtype=np.float32)
    expected = np.array([[2.0 / (2.0 + 1e-6), 0.0], [0.0, 10.0]], dtype=np.float32)
    out = flt.apply(obs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_a_filter_that_saw_one_observation_has_std_0_and_clips():
    """RLlib's variance is 0 while n <= 1: (3 - 2) / 1e-6, clipped to 10."""
    taken = filter_state.as_arrays(algorithm_state(stat([[2.0, 4.0]])))
    agents = filter_state.filter_states(taken, where="t")
    assert list(agents) == [WHERE]
    flt = ObservationFilter.from_agent_state(agents[WHERE][None])
    np.testing.assert_array_equal(flt.std, np.zeros(2, dtype=np.float32))
    np.testing.assert_allclose(flt.apply(np.array([3.0, 4.0])), [10.0, 0.0])


def test_an_unfiltered_run_has_no_filter_and_a_per_agent_filter_is_refused():
    assert observation_filter_in({"env_runner": {}}, where="t", label="run") is None
    state = algorithm_state(stat(VALUES), agents=("player_0", "player_1"))
    with pytest.raises(UserError, match="player_0, player_1"):
        observation_filter_in(state, where="t", label="run")
