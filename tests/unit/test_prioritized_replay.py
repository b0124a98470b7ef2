"""The device sum tree (rl_platform/replay/sum_tree.py) and proportional prioritized replay
(rl_platform/replay/prioritized.py): draws in proportion to priority^alpha, RLlib's
importance weights, priority updates and new rows at the largest priority."""

import pytest
import torch

from rl_platform.replay.prioritized import PrioritizedSampler, PrioritySettings
from rl_platform.replay.sum_tree import SumTree


def test_sums_and_minimum_follow_updates_with_repeated_indices():
    tree = SumTree(8, device=torch.device("cpu"))
    tree.set(torch.arange(5), torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert float(tree.total()) == 15.0 and float(tree.minimum()) == 1.0
    tree.set(torch.tensor([0, 0, 4]), torch.tensor([7.0, 7.0, 0.5]))
    assert float(tree.total()) == 7 + 2 + 3 + 4 + 0.5 and float(tree.minimum()) == 0.5
    # Rebuilding from the leaves gives the same nodes.
    rebuilt = SumTree(8, device=torch.device("cpu"))
    rebuilt.load_leaves(tree.leaf_values(5))
    torch.testing.assert_close(rebuilt.sums, tree.sums, rtol=0, atol=0)
    torch.testing.assert_close(rebuilt.mins, tree.mins, rtol=0, atol=0)


def test_find_returns_the_leaf_where_the_running_sum_passes_the_target():
    tree = SumTree(4, device=torch.device("cpu"))
    tree.set(torch.arange(3), torch.tensor([1.0, 0.0, 2.0]))
    found = tree.find(torch.tensor([0.0, 0.5, 0.999, 1.0, 2.9, 3.0]))
    # Running sums 1, 1, 3: the empty leaf 1 and leaf 3 are never found, even at the total.
    assert found.tolist() == [0, 0, 0, 2, 2, 2]


def test_draws_follow_priority_to_the_alpha_and_weights_are_rlllibs():
    sampler = PrioritizedSampler(8, settings=PrioritySettings(alpha=0.5, beta=0.4), device="cpu")
    sampler.added(torch.arange(6))
    td_errors = torch.tensor([1.0, 4.0, 9.0, 16.0, 0.0, -25.0])  # priorities^0.5: 1 2 3 4 0 5
    sampler.update_priorities(torch.arange(6), td_errors)
    generator = torch.Generator().manual_seed(0)
    indices, weights = sampler.sample(150_000, size=6, generator=generator)
    shares = torch.bincount(indices, minlength=6).double() / indices.numel()
    expected = torch.tensor([1, 2, 3, 4, 1e-6, 5], dtype=torch.float64) / 15.000001
    # Each share within 0.004 (about four binomial sigmas of the largest, 0.0012).
    torch.testing.assert_close(shares, expected, rtol=0, atol=0.004)
    # w_i = (min_k P(k) / P(i))^beta: RLlib's (N P(i))^-beta over its largest value.
    leaf = torch.tensor([1.0, 2.0, 3.0, 4.0, 1e-6, 5.0], dtype=torch.float64)
    torch.testing.assert_close(weights, ((1e-6 / leaf[indices]) ** 0.4).float(), rtol=1e-6, atol=0)


def test_new_rows_enter_at_the_largest_priority_seen():
    sampler = PrioritizedSampler(4, settings=PrioritySettings(alpha=1.0), device="cpu")
    sampler.added(torch.arange(2))
    assert sampler.tree.leaf_values(2).tolist() == [1.0, 1.0]
    sampler.update_priorities(torch.tensor([0, 1]), torch.tensor([3.0, 0.5]))
    sampler.added(torch.tensor([2]))
    assert sampler.tree.leaf_values(3).tolist() == [3.0, 0.5, 3.0]


def test_a_prioritized_store_draws_the_high_error_row_more():
    from tests.unit.replay_support import filled_store

    store = filled_store(2, capacity=4, num_envs=2, replay="prioritized", seed=5)
    store.sampler.update_priorities(torch.arange(4), torch.tensor([1.0, 1.0, 1.0, 8.0]))
    counts = torch.bincount(store.sample(40_000).indices, minlength=4).float() / 40_000
    # 8^0.6 = 3.48 against 1 + 1 + 1: row 3 takes 0.537 of the draws.
    assert counts[3].item() == pytest.approx(8**0.6 / (3 + 8**0.6), abs=0.01)
