"""The captured acting step on CUDA against the eager per-module path (`gpu` marker).

Tolerances: with `precision: fp32`, logits and states within 1e-4 of the eager CPU path
(TF32 is off in torch by default for matmuls; the remaining differences are kernel choices
for different batch sizes); with `precision: bf16` (the reference recipe), the graph and the
eager path on the same GPU within 2e-2 on the logits, and the same greedy actions wherever
the best action leads the second by more than that.
"""

import numpy as np
import pytest
import torch

from rl_platform.env_runner.device_acting import ActingBuffers, ModuleActing
from rl_platform.sampling.seat_states import flat_rows
from tests.acting_support import GAMES, SEATS, EagerReference, model_obs, streaming_module

if not torch.cuda.is_available():  # named explicitly on a machine without one
    pytest.skip(
        "needs a CUDA GPU (tests/gpu is collected only where torch sees one; this file was named "
        "explicitly on a machine without)",
        allow_module_level=True,
    )
CUDA = torch.device("cuda")


def _engine(module, *, graphs: bool) -> ModuleActing:
    buffers = ActingBuffers(
        num_games=GAMES, num_seats=SEATS, device=CUDA, initial_state=module.get_initial_state()
    )
    return ModuleActing(module, buffers, graphs=graphs)


def _all_rows() -> np.ndarray:
    games = np.repeat(np.arange(GAMES), SEATS)
    return flat_rows(games, np.tile(np.arange(SEATS), GAMES), num_seats=SEATS)


def test_the_graph_acts_as_the_eager_cpu_path_in_fp32() -> None:
    cpu_module = streaming_module(precision="fp32")
    reference = EagerReference(cpu_module)
    engine = _engine(streaming_module(precision="fp32").to(CUDA), graphs=True)
    rng = np.random.default_rng(0)
    games = np.array([0, 2, 3])  # 3 rows: the graph is captured for 8, padding at the spare row
    seats = np.array([1, 0, 1])
    for step in range(6):
        obs = model_obs(rng)
        engine.buffers.load(obs)
        expected = reference.act(obs, games, seats, explore=False)
        got = engine.act(flat_rows(games, seats, num_seats=SEATS), explore=False)
        np.testing.assert_array_equal(got.actions, expected.actions)
        torch.testing.assert_close(got.logits, expected.logits, atol=1e-4, rtol=1e-4)
        if step == 2:
            reference.restart(np.array([2]))
            engine.buffers.states.restart(np.array([2]))
    states = engine.buffers.states.read(flat_rows(games, seats, num_seats=SEATS))
    for key, value in reference.states.items():
        np.testing.assert_allclose(states[key], value[games, seats], atol=1e-4, rtol=1e-4)


def test_the_graph_acts_as_eager_cuda_in_bf16() -> None:
    module = streaming_module(precision="bf16").to(CUDA)
    graph, eager = _engine(module, graphs=True), _engine(module, graphs=False)
    rng = np.random.default_rng(1)
    rows = _all_rows()
    for _ in range(5):
        obs = model_obs(rng)
        graph.buffers.load(obs)
        eager.buffers.load(obs)
        got, expected = graph.act(rows, explore=False), eager.act(rows, explore=False)
        torch.testing.assert_close(got.logits, expected.logits, atol=2e-2, rtol=2e-2)
        top2 = expected.logits.topk(2, dim=-1).values
        clear = (top2[:, 0] - top2[:, 1] > 2e-2).numpy()
        np.testing.assert_array_equal(got.actions[clear], expected.actions[clear])


def test_weights_loaded_in_place_reach_the_captured_graph() -> None:
    module = streaming_module(seed=0, precision="fp32").to(CUDA)
    other = streaming_module(seed=1, precision="fp32")
    engine = _engine(module, graphs=True)
    obs = model_obs(np.random.default_rng(2))
    rows = _all_rows()
    engine.buffers.load(obs)
    engine.act(rows, explore=False)  # captured with seed 0's weights
    engine.buffers.states.restart(np.arange(GAMES))
    module.set_state(other.get_state())
    got = engine.act(rows, explore=False)
    games, seats = np.repeat(np.arange(GAMES), SEATS), np.tile(np.arange(SEATS), GAMES)
    expected = EagerReference(other).act(obs, games, seats, explore=False)
    torch.testing.assert_close(got.logits, expected.logits, atol=1e-4, rtol=1e-4)


def test_sampled_actions_follow_the_policy() -> None:
    """Actions drawn inside the graph: each action's frequency within 4 standard errors of
    its mean probability over the draws."""
    module = streaming_module(precision="fp32").to(CUDA)
    engine = _engine(module, graphs=True)
    rng = np.random.default_rng(3)
    rows = _all_rows()
    counts, expected = np.zeros(5), np.zeros(5)
    for _ in range(400):
        engine.buffers.load(model_obs(rng))
        out = engine.act(rows, explore=True)
        counts += np.bincount(out.actions, minlength=5)
        expected += out.log_probs.exp().sum(0).numpy()
    draws = counts.sum()
    p = expected / draws
    np.testing.assert_array_less(
        np.abs(counts / draws - p), 4 * np.sqrt(p * (1 - p) / draws) + 1e-3
    )


@pytest.mark.parametrize("rows", [1, 7, 8, 9])
def test_every_batch_size_gets_its_own_padded_graph(rows: int) -> None:
    module = streaming_module(precision="fp32").to(CUDA)
    engine = _engine(module, graphs=True)
    engine.buffers.load(model_obs(np.random.default_rng(4)))
    out = engine.act(_all_rows()[:rows], explore=False)
    assert out.actions.shape == (rows,) and out.logits.shape == (rows, 5)
    assert list(engine._captured) == [(max(8, 1 << (rows - 1).bit_length()), False)]
