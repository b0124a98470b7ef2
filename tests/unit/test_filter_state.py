"""An observation filter's state in a checkpoint (rl_platform/rllib/filter_state.py), without
Ray: arrays taken, RLlib's strings written by our encoder, anything RLlib would unpickle
refused, and every restore checked before `set_state`."""

import base64
import pickle
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from rl_platform.base.errors import IntegrityError
from rl_platform.rllib import filter_state
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, restore_algorithm
from rl_platform.storage.checkpoints import LoadedCheckpoint
from tests.unit.filter_state_support import (
    VALUES,
    WHERE,
    algorithm_state,
    rllib_string,
    running_stat,
    stat,
)


def test_our_encoder_writes_rllibs_string_form_byte_for_byte():
    array = np.array([1.5, -2.0, 3.25])
    assert filter_state.encode_array(array) == rllib_string(array)
    decoded = filter_state.decode_array(filter_state.encode_array(array), where="t")
    np.testing.assert_array_equal(decoded, array)


def test_a_checkpoint_takes_the_statistics_as_arrays_and_restores_them_as_strings():
    taken = filter_state.as_arrays(algorithm_state(stat(VALUES)))
    arrays = running_stat(taken)
    assert all(isinstance(arrays[name], np.ndarray) for name in filter_state.STAT_ARRAYS)
    np.testing.assert_allclose(arrays["mean_array"], [3.0, 12.0])
    np.testing.assert_allclose(arrays["sum_sq_diff_array"], [8.0, 24.0])
    restored = running_stat(filter_state.for_rllib(taken, where="ckpt"))
    for name in filter_state.STAT_ARRAYS:
        assert restored[name] == rllib_string(arrays[name])
    assert restored["num_pushes"] == 3


def test_an_old_checkpoints_strings_are_checked_and_written_again_by_our_encoder():
    old = algorithm_state(stat(VALUES))
    restored = running_stat(filter_state.for_rllib(old, where="ckpt"))
    for name in filter_state.STAT_ARRAYS:
        assert restored[name] == running_stat(old)[name]  # same format: RLlib reads it


def test_the_rest_of_the_tree_is_left_as_it_was():
    state = algorithm_state(stat(VALUES))
    taken = filter_state.as_arrays(state)
    np.testing.assert_array_equal(
        taken["learner_group"]["learner"]["rl_module"]["default_policy"]["w"], np.ones(2)
    )
    assert taken["env_runner"]["num_env_steps_sampled_lifetime"] == 3
    assert isinstance(running_stat(state)["mean_array"], str)  # nothing changed in place
    assert filter_state.as_arrays({"a": [1, (2, "x")]}) == {"a": [1, (2, "x")]}


class Payload:
    def __reduce__(self):
        return (print, ("unpickled",))


def _object_array() -> str:
    return rllib_string(np.array([Payload(), 1.0], dtype=object))


def _bare_pickle() -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(np.zeros(2)))).decode("ascii")


PLANTED = {
    "object array": (_object_array, "Object arrays cannot be loaded"),
    "bare pickle": (_bare_pickle, "contains pickled (object) data)"),
    "not base64": (lambda: "!!not base64!!", "not an array in RLlib's form"),
    "not zlib": (lambda: base64.b64encode(b"plain bytes").decode(), "not an array"),
    "int array": (lambda: rllib_string(np.arange(2)), "int64 array, not a float one"),
    "wrong shape": (lambda: rllib_string(np.zeros(3)), "shape (3,), not the filter's (2,)"),
    "a number": (lambda: 1.5, "a float, not an array"),
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_anything_but_a_float_array_of_the_filters_shape_is_refused_naming_the_field(name):
    make, message = PLANTED[name]
    running = stat(VALUES)
    running["sum_sq_diff_array"] = make()
    with pytest.raises(IntegrityError, match=re.escape(message)) as info:
        filter_state.for_rllib(algorithm_state(running), where="ckpt/algorithm")
    text = str(info.value)
    assert f"ckpt/algorithm/{WHERE}/None/running_stats/0/sum_sq_diff_array" in text
    assert "refusing to hand it to RLlib" in text and "\n" not in text


@pytest.mark.parametrize(
    "edit",
    [
        lambda s: s.update(num_pushes=True),
        lambda s: s.update(num_pushes=-1),
        lambda s: s.update(extra="x"),
        lambda s: s.pop("mean_delta_array"),
    ],
)
def test_a_running_stat_that_is_not_rllibs_is_refused(edit):
    running = stat(VALUES)
    edit(running)
    with pytest.raises(IntegrityError, match="running_stats/0"):
        filter_state.for_rllib(algorithm_state(running), where="ckpt")


def test_a_shape_that_is_not_a_boxs_is_refused():
    state = algorithm_state(stat(VALUES))
    state["env_runner"]["env_to_module_connector"]["MeanStdFilter"][None]["shape"] = "2"
    with pytest.raises(IntegrityError, match="MeanStdFilter/None/shape: '2' is not a Box"):
        filter_state.for_rllib(state, where="ckpt")


class _RecordingAlgorithm:
    """Stands in for an Algorithm: records what `set_state` was given."""

    def __init__(self) -> None:
        self.states: list[dict] = []
        self.env_runner_group = None

    def set_state(self, state: dict) -> None:
        self.states.append(state)


def _checkpoint(state: dict) -> LoadedCheckpoint:
    return LoadedCheckpoint(
        path=Path("run/checkpoints/iter_000002"),
        meta={"iteration": 2},
        parts={ALGORITHM_PART: state},
    )


def test_restore_hands_rllib_our_strings_and_refuses_a_pickle_before_set_state():
    """Every restore (a resume, a search trial's) goes through `restore_algorithm`."""
    algo = _RecordingAlgorithm()
    assert (
        restore_algorithm(algo, _checkpoint(filter_state.as_arrays(algorithm_state(stat(VALUES)))))
        == 2
    )
    (given,) = algo.states
    assert running_stat(given)["mean_array"] == rllib_string(np.array([3.0, 12.0]))
    planted = stat(VALUES)
    planted["mean_array"] = _object_array()
    with pytest.raises(IntegrityError, match="iter_000002/algorithm/env_runner"):
        restore_algorithm(algo, _checkpoint(algorithm_state(planted)))
    assert len(algo.states) == 1
