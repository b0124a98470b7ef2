"""A sum tree (with the minimum beside it) over fixed leaves, as device tensors: updates and
prefix-sum searches for a whole batch at once, in a fixed number of steps, no host read.

Schaul et al. 2016, "Prioritized Experience Replay", appendix B.2.1: a binary tree whose
parents hold the sum of their children finds the leaf where a running sum passes `u` in
log2(leaves) steps. Here the tree is one tensor of `2 * leaves` nodes (root at 1, leaf `i` at
`leaves + i`); an update writes its leaves and recomputes their ancestors level by level, a
search walks all its queries down together. The minimum (RLlib keeps a min segment tree
beside its sum tree, ray/rllib/execution/segment_tree.py) gives the largest importance
weight, which normalizes the others.
"""

import torch

from rl_platform.replay.layout import PRIORITY_DTYPE


class SumTree:
    """Sums and minima of `leaves` non-negative values (a power of two), all zero at first;
    an empty leaf counts as +inf for the minimum."""

    def __init__(self, leaves: int, *, device: torch.device) -> None:
        if leaves < 1 or leaves & (leaves - 1):
            raise ValueError(f"a sum tree's leaves must be a power of two, not {leaves}")
        self.leaves, self.depth = leaves, leaves.bit_length() - 1
        self.sums = torch.zeros(2 * leaves, dtype=PRIORITY_DTYPE, device=device)
        self.mins = torch.full((2 * leaves,), torch.inf, dtype=PRIORITY_DTYPE, device=device)

    def total(self) -> torch.Tensor:
        return self.sums[1]

    def minimum(self) -> torch.Tensor:
        """The smallest non-empty leaf (+inf while all are empty)."""
        return self.mins[1]

    def values(self, indices: torch.Tensor) -> torch.Tensor:
        return self.sums[self.leaves + indices]

    def set(self, indices: torch.Tensor, values: torch.Tensor) -> None:
        """Leaves `indices` (long [B]) take `values` [B]; with repeated indices one of the
        values is kept, and the sums agree with whichever it is."""
        nodes = self.leaves + indices
        values = values.to(PRIORITY_DTYPE)
        self.sums[nodes] = values
        self.mins[nodes] = values
        for _ in range(self.depth):
            nodes = nodes // 2
            left, right = 2 * nodes, 2 * nodes + 1
            self.sums[nodes] = self.sums[left] + self.sums[right]
            self.mins[nodes] = torch.minimum(self.mins[left], self.mins[right])

    def find(self, targets: torch.Tensor) -> torch.Tensor:
        """For each target `u` in [0, total), the leaf `i` with
        sum(leaves[:i]) <= u < sum(leaves[:i + 1]): leaf `i` is found with probability
        leaves[i] / total when `u` is uniform. The walk never enters an empty subtree, so
        rounding near a boundary cannot pick an empty leaf."""
        u = targets.to(PRIORITY_DTYPE)
        nodes = torch.ones_like(u, dtype=torch.long)
        for _ in range(self.depth):
            left = 2 * nodes
            left_sum, right_sum = self.sums[left], self.sums[left + 1]
            go_right = ((u >= left_sum) & (right_sum > 0)) | (left_sum <= 0)
            u = torch.where(go_right, u - left_sum, u)
            nodes = torch.where(go_right, left + 1, left)
        return nodes - self.leaves

    def leaf_values(self, count: int) -> torch.Tensor:
        """The first `count` leaves (a view)."""
        return self.sums[self.leaves : self.leaves + count]

    def load_leaves(self, values: torch.Tensor) -> None:
        """Leaves `0..len(values)` take `values`, every other leaf is emptied, and every
        parent is recomputed bottom up."""
        self.sums.zero_()
        self.mins.fill_(torch.inf)
        count = values.shape[0]
        self.sums[self.leaves : self.leaves + count] = values.to(PRIORITY_DTYPE)
        self.mins[self.leaves : self.leaves + count] = values.to(PRIORITY_DTYPE)
        low = self.leaves // 2
        while low >= 1:
            children = slice(2 * low, 4 * low)
            self.sums[low : 2 * low] = self.sums[children].view(-1, 2).sum(-1)
            self.mins[low : 2 * low] = self.mins[children].view(-1, 2).amin(-1)
            low //= 2
