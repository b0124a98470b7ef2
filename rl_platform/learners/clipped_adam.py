"""Several Adam optimizers stepped together, each clipped by its own gradients' global norm,
all refused on the device when any norm is not finite.

RLlib clips per optimizer (ray/rllib/core/learner/learner.py, `postprocess_gradients`: each
optimizer's gradients by `grad_clip` over their global norm, `grad_clip / max(norm + 1e-6,
grad_clip)`, here rl_platform/learners/gradients.py's `clip_by_global_norm`), and SAC has four
(two critics, actor, temperature). Adam runs on the optimizers' own state with device tensors
(rl_platform/learners/device_adam.py), so a step holds no host read; a non-finite norm
anywhere scales every optimizer's step to nothing, which is what
rl_platform/learners/finite_guard.py does for RLlib's own learners.
"""

from collections.abc import Sequence

import torch

from rl_platform.learners.device_adam import adam_step, prepare_state
from rl_platform.learners.gradients import clip_by_global_norm


class ClippedAdams:
    def __init__(self, optimizers: Sequence[torch.optim.Adam], *, grad_clip: float | None) -> None:
        self.optimizers, self.grad_clip = list(optimizers), grad_clip
        for optimizer in self.optimizers:
            prepare_state(optimizer)
        device = optimizer.param_groups[0]["params"][0].device
        self.lrs = [
            torch.tensor(float(opt.param_groups[0]["lr"]), device=device) for opt in optimizers
        ]
        self.params = [
            [p for group in opt.param_groups for p in group["params"]] for opt in optimizers
        ]

    def zero_grad(self) -> None:
        # Kept allocated (not None): a captured step reads gradients where they were.
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=False)

    def step(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Clip and step every optimizer; (each optimizer's gradient norm [K], ok 0/1)."""
        grads = [[p.grad for p in params if p.grad is not None] for params in self.params]
        norms, flags = zip(
            *(clip_by_global_norm(group, grad_clip=self.grad_clip) for group in grads),
            strict=True,
        )
        ok = torch.stack(flags).min()  # one non-finite norm refuses every optimizer's step
        for optimizer, lr in zip(self.optimizers, self.lrs, strict=True):
            adam_step(optimizer, ok=ok, lr=lr)
        return torch.stack(norms), ok
