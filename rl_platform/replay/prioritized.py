"""Proportional prioritized replay (Schaul et al. 2016, "Prioritized Experience Replay",
section 3.3 and 3.4) on a device sum tree, in the form RLlib's
`PrioritizedEpisodeReplayBuffer` uses (ray/rllib/utils/replay_buffers/
prioritized_episode_buffer.py):

- P(i) = p_i^alpha / sum_k p_k^alpha, with p_i = max(|td_error_i|, 1e-12) once the row has
  been learned from, and the largest priority seen so far (1 at first) for a new row;
- w_i = (N * P(i))^-beta / max_k (N * P(k))^-beta = (min_k p_k^alpha / p_i^alpha)^beta:
  the largest weight (the rarest row) is 1. RLlib takes the minimum over all stored rows, not
  over the batch, and so does this.

RLlib's defaults: alpha 0.6, beta 0.4, both fixed (no beta annealing on the new stack).
Everything stays on the device: the draw is a `torch.rand` on the sampler's generator scaled
by the tree's total, the search walks the tree in log2(leaves) steps, and the new maximum
priority is a device `maximum`, so a learner can update priorities without a host read.
"""

from dataclasses import dataclass

import torch

from rl_platform.replay.layout import PRIORITY_DTYPE, tree_leaves
from rl_platform.replay.sum_tree import SumTree

MIN_PRIORITY = 1e-12
"""RLlib's floor on a priority, so that no row becomes unreachable."""


@dataclass(frozen=True)
class PrioritySettings:
    alpha: float = 0.6
    """How much the TD error shapes sampling: 0 is uniform, 1 fully proportional."""
    beta: float = 0.4
    """How much the importance weights correct for it: 0 not at all, 1 fully."""


class PrioritizedSampler:
    """Rows sampled in proportion to their priority^alpha (module docstring)."""

    def __init__(
        self, transitions: int, *, settings: PrioritySettings, device: torch.device
    ) -> None:
        self.settings, self.device = settings, device
        self.tree = SumTree(tree_leaves(transitions), device=device)
        self.max_priority = torch.ones((), dtype=PRIORITY_DTYPE, device=device)

    def added(self, indices: torch.Tensor) -> None:
        new = (self.max_priority**self.settings.alpha).expand(indices.shape[0])
        self.tree.set(indices, new)

    def sample(
        self, batch_size: int, *, size: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        draws = torch.rand(
            batch_size, generator=generator, dtype=PRIORITY_DTYPE, device=self.device
        )
        indices = self.tree.find(draws * self.tree.total())
        weights = (self.tree.minimum() / self.tree.values(indices)) ** self.settings.beta
        return indices, weights.to(torch.float32)

    def update_priorities(self, indices: torch.Tensor, td_errors: torch.Tensor) -> None:
        """Rows `indices` were learned from with these TD errors (any sign)."""
        priorities = td_errors.detach().abs().to(PRIORITY_DTYPE).clamp_min(MIN_PRIORITY)
        self.tree.set(indices, priorities**self.settings.alpha)
        self.max_priority = torch.maximum(self.max_priority, priorities.amax())

    def state_dict(self, size: int) -> dict[str, torch.Tensor]:
        return {
            "tree_leaves": self.tree.leaf_values(size).clone(),  # priority^alpha
            "max_priority": self.max_priority.clone(),
        }

    def load_state_dict(self, state: dict[str, torch.Tensor], size: int) -> None:
        self.tree.load_leaves(state["tree_leaves"][:size].to(self.device))
        self.max_priority = state["max_priority"].to(self.device, PRIORITY_DTYPE).clone()
