"""Target networks: Polyak averaging of parameters as one foreach kernel, no host read.

target <- tau * online + (1 - tau) * target (Lillicrap et al. 2016, "DDPG"; SAC's tau), which
RLlib applies by rebuilding the target's state dict (ray/rllib/utils/torch_utils.py,
`update_target_network`). `torch._foreach_lerp_` does the same update in place on every
parameter at once; at tau = 1 it copies exactly (lerp computes `end - (end - start) * (1 -
weight)` for weights >= 0.5), which is DQN's hard sync. The nets here hold no buffers, so
parameters are the whole state.
"""

from collections.abc import Iterable

import torch
from torch import nn


class TargetPair:
    """The parameters of online nets and of their targets, listed once, in matching order."""

    def __init__(self, online: Iterable[nn.Module], targets: Iterable[nn.Module]) -> None:
        self.online = [p for net in online for p in net.parameters()]
        self.targets = [p for net in targets for p in net.parameters()]
        shapes = [p.shape for p in self.online], [p.shape for p in self.targets]
        if shapes[0] != shapes[1]:
            raise ValueError("online and target nets differ in their parameters")

    @torch.no_grad()
    def update(self, tau: float | torch.Tensor) -> None:
        """target <- target + tau * (online - target)."""
        torch._foreach_lerp_(self.targets, self.online, tau)
