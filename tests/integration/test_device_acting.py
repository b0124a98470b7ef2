"""`ModuleActing` on the CPU computes what the eager per-module path computed (no Ray runtime).

The array runner acts through `device_acting`: model inputs and recurrent states in flat
buffers, one call per module for all the seats it plays. On the CPU (and on CUDA without
graphs) that call runs eagerly over the exact rows; it must give the same actions, logits,
log-probabilities and states as the per-module numpy path did (`acting_support.eager_act`).
Tolerance: equality up to 1e-6 (the same float32 operations, rows gathered differently). The
CUDA-graph path has its own tests under the `gpu` marker (tests/gpu/).
"""

import numpy as np
import pytest
import torch

from rl_platform.env_runner.device_acting import ActingBuffers, ModuleActing
from rl_platform.sampling.seat_states import flat_rows
from tests.acting_support import GAMES, SEATS, EagerReference, model_obs, streaming_module

TOL = {"atol": 1e-6, "rtol": 1e-6}


def _engine(module, device: str = "cpu") -> ModuleActing:
    buffers = ActingBuffers(
        num_games=GAMES,
        num_seats=SEATS,
        device=torch.device(device),
        initial_state=module.get_initial_state(),
    )
    return ModuleActing(module, buffers, graphs=False)


@pytest.mark.parametrize("explore", [False, True])
def test_acting_equals_the_eager_per_module_path(explore: bool) -> None:
    module = streaming_module()
    reference, engine = EagerReference(module), _engine(module)
    rng = np.random.default_rng(0)
    # Seat 1 of games 0-2 and seat 0 of games 3-4, then the other seats: two modules' rows.
    games = np.array([0, 1, 2, 3, 4])
    seats = np.array([1, 1, 1, 0, 0])
    for step in range(7):
        obs = model_obs(rng)
        engine.buffers.load(obs)
        for rows_seats in (seats, 1 - seats):
            torch.manual_seed(step)
            expected = reference.act(obs, games, rows_seats, explore=explore)
            torch.manual_seed(step)
            got = engine.act(flat_rows(games, rows_seats, num_seats=SEATS), explore=explore)
            np.testing.assert_array_equal(got.actions, expected.actions)
            torch.testing.assert_close(got.logits, expected.logits, **TOL)
            torch.testing.assert_close(got.log_probs, expected.log_probs, **TOL)
        if step == 3:  # games 1 and 4 end: their seats restart from the initial state
            ended = np.array([1, 4])
            reference.restart(ended)
            engine.buffers.states.restart(ended)
    every = flat_rows(np.repeat(np.arange(GAMES), SEATS), np.tile([0, 1], GAMES), num_seats=SEATS)
    states = engine.buffers.states.read(every)
    for key, value in reference.states.items():
        np.testing.assert_allclose(
            states[key], value.reshape(GAMES * SEATS, *value.shape[2:]), 1e-6, 1e-6
        )


def test_last_in_keeps_the_state_each_row_acted_from() -> None:
    module = streaming_module()
    engine = _engine(module)
    rng = np.random.default_rng(1)
    rows = flat_rows(np.arange(GAMES), np.zeros(GAMES, np.int64), num_seats=SEATS)
    engine.buffers.load(model_obs(rng))
    engine.act(rows, explore=False)
    before = engine.buffers.states.read(rows)
    engine.buffers.load(model_obs(rng))
    engine.act(rows, explore=False)
    last_in = engine.buffers.states.read(rows, last_in=True)
    for key, value in before.items():
        np.testing.assert_array_equal(last_in[key], value)
    assert not np.array_equal(engine.buffers.states.read(rows)["h"], before["h"])


def test_weights_loaded_in_place_take_effect() -> None:
    """The league reloads slot weights with `set_state`: the next step uses them."""
    module, other = streaming_module(seed=0), streaming_module(seed=1)
    engine = _engine(module)
    rng = np.random.default_rng(2)
    obs = model_obs(rng)
    rows = flat_rows(np.arange(GAMES), np.ones(GAMES, np.int64), num_seats=SEATS)
    engine.buffers.load(obs)
    module.set_state(other.get_state())
    got = engine.act(rows, explore=False)
    expected = EagerReference(other).act(
        obs, np.arange(GAMES), np.ones(GAMES, np.int64), explore=False
    )
    torch.testing.assert_close(got.logits, expected.logits, **TOL)
