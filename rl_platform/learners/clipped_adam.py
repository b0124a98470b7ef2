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
        """Zero the gradients in place (kept allocated, not None: a captured step reads them
        where they were), as `zero_grad(set_to_none=False)` does, in one foreach kernel
        instead of the optimizer's per-parameter loop under a profiler record."""
        grads = [p.grad for params in self.params for p in params if p.grad is not None]
        if grads:
            torch._foreach_zero_(grads)

    def step(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Clip and step every optimizer; (each optimizer's gradient norm [K], ok 0/1)."""
        grads = [[p.grad for p in params if p.grad is not None] for params in self.params]
        norms, flags = zip(
            *(clip_by_global_norm(group, grad_clip=self.grad_clip) for group in grads),
            strict=True,
        )
        # One non-finite norm refuses every optimizer's step (one optimizer: its own flag).
        ok = flags[0] if len(flags) == 1 else torch.stack(flags).min()
        for optimizer, lr in zip(self.optimizers, self.lrs, strict=True):
            adam_step(optimizer, ok=ok, lr=lr)
        return torch.stack(norms), ok
