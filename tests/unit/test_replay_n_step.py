"""n-step windows read at sample time (rl_platform/replay/n_step.py) against a loop over
each env's history written the obvious way: episode ends, truncation, the newest rows and
rows overwritten by the wrap."""

import pytest
import torch

from tests.unit.replay_support import filled_store, transition

GAMMA = 0.9


def naive_window(history: list[dict], step: int, env: int, n_step: int) -> dict:
    """From `history[step]` (one dict per add, as `transition` makes them) on, env `env`."""
    total, last = 0.0, step
    for k in range(n_step):
        if step + k >= len(history):
            break
        row = history[step + k]
        total += GAMMA**k * float(row["rewards"][env])
        last = step + k
        if bool(row["terminated"][env] | row["truncated"][env]):
            break
    row = history[last]
    return {
        "rewards": total,
        "next_obs": float(row["next_obs"][env, 0]),
        "terminated": float(row["terminated"][env]),
        "truncated": float(row["truncated"][env]),
        "n_steps": float(last - step + 1),
    }


@pytest.mark.parametrize("n_step", [1, 3, 5])
@pytest.mark.parametrize("steps", [4, 11])  # before and after the store wraps (5 slots)
def test_every_row_matches_the_naive_window(n_step, steps):
    ends = {(1, 0), (2, 1), (6, 0), (7, 2), (8, 1)}
    num_envs = 3
    store = filled_store(
        steps, capacity=15, num_envs=num_envs, ends=ends, n_step=n_step, gamma=GAMMA
    )
    history = [transition(s, num_envs, ends=ends) for s in range(steps)]
    indices = torch.arange(store.size)
    batch = store.gather(indices, torch.ones(store.size))
    for index in indices.tolist():
        slot, env = divmod(index, num_envs)
        step = int(store.obs[slot, env, 0]) - 100 * env  # the step this row holds
        expected = naive_window(history, step, env, n_step)
        for name, value in expected.items():
            got = getattr(batch, name)[index]
            assert float(got.reshape(-1)[0]) == pytest.approx(value, abs=1e-5), (
                name,
                step,
                env,
            )


def test_the_newest_rows_have_shorter_windows():
    store = filled_store(3, capacity=30, num_envs=1, n_step=5, gamma=GAMMA)
    batch = store.gather(torch.arange(3), torch.ones(3))
    assert batch.n_steps.tolist() == [3.0, 2.0, 1.0]
    assert batch.rewards.tolist() == pytest.approx([0 + 0.9 * 1 + 0.81 * 2, 1 + 0.9 * 2, 2])
