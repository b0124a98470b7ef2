"""`ReplayStore` (rl_platform/replay/store.py): rows written in place, wrap-around, batch
shapes, uniform draws, and a `state_dict` that restores exactly (through safetensors)."""

import re

import gymnasium as gym
import pytest
import torch
from safetensors.torch import load_file, save_file

from rl_platform.replay.layout import layout_for, store_bytes
from rl_platform.replay.store import ReplayStore
from tests.unit.replay_support import LAYOUT, OBS_DIM, filled_store, transition


def test_add_writes_one_slot_per_step_and_wraps_over_the_oldest():
    store = filled_store(6, capacity=12, num_envs=3)  # 4 slots
    assert (store.slots, store.size, store.cursor) == (4, 12, 2)
    # Slots 0 and 1 hold steps 4 and 5 (overwritten), 2 and 3 still steps 2 and 3.
    assert store.obs[:, 0, 0].tolist() == [4.0, 5.0, 2.0, 3.0]
    assert store.obs[:, 2, 0].tolist() == [204.0, 205.0, 202.0, 203.0]
    assert store.rewards[1].tolist() == pytest.approx([5.0, 5.1, 5.2])


def test_a_sampled_batch_has_fixed_shapes_and_matching_rows():
    store = filled_store(3, capacity=12, num_envs=3)
    batch = store.sample(32)
    assert batch.obs.shape == (32, OBS_DIM) and batch.next_obs.shape == (32, OBS_DIM)
    assert batch.actions.shape == (32,) and batch.actions.dtype == torch.int64
    for name in ("rewards", "terminated", "truncated", "n_steps", "weights", "indices"):
        assert getattr(batch, name).shape == (32,), name
    assert bool((batch.indices < store.size).all())
    slot, env = batch.indices // 3, batch.indices % 3
    torch.testing.assert_close(batch.obs[:, 0], (100 * env + slot).float())
    torch.testing.assert_close(batch.next_obs[:, 0], batch.obs[:, 0] + 1)
    assert bool((batch.weights == 1).all())


def test_uniform_draws_cover_every_row_evenly():
    store = filled_store(4, capacity=12, num_envs=3, seed=1)
    counts = torch.bincount(store.sample(120_000).indices, minlength=12).float()
    # 10_000 expected per row; a binomial's std is ~96, so 4% is over four sigmas.
    assert counts.min() > 9_600 and counts.max() < 10_400


def test_only_written_rows_are_drawn_before_the_store_is_full():
    store = filled_store(2, capacity=30, num_envs=3)
    assert set(store.sample(2_000).indices.tolist()) == set(range(6))


def test_an_empty_store_refuses_to_sample():
    with pytest.raises(ValueError, match="empty"):
        filled_store(0).sample(4)


def test_state_dict_round_trip_is_exact_through_safetensors(tmp_path):
    ends = {(2, 0), (4, 1)}
    store = filled_store(7, ends=ends, replay="prioritized", n_step=2, seed=3)
    batch = store.sample(5)
    store.sampler.update_priorities(batch.indices, torch.linspace(0.1, 3.0, 5))
    path = tmp_path / "replay.safetensors"
    save_file(store.state_dict(), str(path))
    loaded = filled_store(0, replay="prioritized", n_step=2, seed=99)
    loaded.load_state_dict(load_file(str(path)))
    assert (loaded.cursor, loaded.filled) == (store.cursor, store.filled)
    for name in ("obs", "actions", "rewards", "next_obs", "terminated", "truncated"):
        torch.testing.assert_close(getattr(loaded, name), getattr(store, name), rtol=0, atol=0)
    torch.testing.assert_close(loaded.sampler.tree.sums, store.sampler.tree.sums, rtol=0, atol=0)
    # Same draws after the restore, and after more steps are added to both.
    for _ in range(2):
        a, b = store.sample(16), loaded.sample(16)
        torch.testing.assert_close(a.indices, b.indices, rtol=0, atol=0)
        torch.testing.assert_close(a.weights, b.weights, rtol=0, atol=0)
        torch.testing.assert_close(a.rewards, b.rewards, rtol=0, atol=0)
        store.add(**transition(7, 3))
        loaded.add(**transition(7, 3))


def test_state_dict_holds_only_the_filled_rows():
    state = filled_store(2, capacity=30, num_envs=3).state_dict()
    assert state["obs"].shape == (2, 3, OBS_DIM)
    assert int(state["filled"]) == 2 and int(state["cursor"]) == 2


def test_store_bytes_is_what_the_store_allocates():
    store = filled_store(0, capacity=10, num_envs=3)  # 4 slots: 12 transitions
    rows = store_bytes(LAYOUT, 10, num_envs=3, prioritized=False)
    assert rows == store.nbytes() == 12 * (2 * OBS_DIM * 4 + 8 + 4 + 2)
    prioritized = store_bytes(LAYOUT, 10, num_envs=3, prioritized=True)
    assert prioritized == rows + 2 * 2 * 16 * 8  # 16 leaves: sums and minima of 32 nodes


def test_layout_keeps_float_observations_as_float32_and_frames_as_bytes():
    mujoco = layout_for(
        gym.spaces.Box(-1.0, 1.0, (11,), dtype="float64"), gym.spaces.Box(-1, 1, (3,))
    )
    assert (mujoco.obs_dtype, mujoco.action_shape, mujoco.action_dtype) == (
        torch.float32,
        (3,),
        torch.float32,
    )
    frames = layout_for(gym.spaces.Box(0, 255, (4, 64, 64), dtype="uint8"), gym.spaces.Discrete(6))
    assert frames.obs_dtype == torch.uint8 and frames.transition_bytes() == 2 * 4 * 64 * 64 + 8 + 6


def test_a_store_too_large_for_the_machine_is_refused_with_the_figure(monkeypatch):
    from rl_platform.base.errors import UserError
    from rl_platform.replay import memory_fit

    monkeypatch.setattr(memory_fit, "available_bytes", lambda device: 1 << 30)
    layout = layout_for(gym.spaces.Box(0, 255, (4, 84, 84), dtype="uint8"), gym.spaces.Discrete(6))
    with pytest.raises(UserError) as error:
        ReplayStore(layout=layout, capacity=1_000_000, num_envs=8, device="cpu")
    message = str(error.value)
    assert "52.58 GiB" in message and "1.00 GiB available" in message
    fitting = int(re.search(r"lower training.replay_capacity to at most (\d+)", message)[1])
    budget = memory_fit.HEADROOM * (1 << 30)

    def bytes_for(capacity: int) -> int:
        return store_bytes(layout, capacity, num_envs=8, prioritized=False)

    assert bytes_for(fitting) <= budget < bytes_for(fitting + 1)
    assert fitting == 15208  # 1901 slots of 8 envs


def test_the_memory_check_reads_the_machine(monkeypatch):
    from rl_platform.replay import memory_fit

    available = memory_fit.available_bytes(torch.device("cpu"))
    assert available is None or available > 0
    monkeypatch.setattr(memory_fit, "MEMINFO", memory_fit.MEMINFO.with_name("no-such-file"))
    assert memory_fit.available_bytes(torch.device("cpu")) is None
