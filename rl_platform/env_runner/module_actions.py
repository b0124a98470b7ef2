"""What one module's rows acted with, and scripted modules' actions (RLlib adapter).

Torch modules act in `device_acting` (one batched, possibly captured, step per module);
`PolicyOutput` carries what the learner keeps of it: `ACTION_LOGP` of the actions taken and
`ACTION_DIST_INPUTS`, as RLlib's default module-to-env pieces do
(ray/rllib/connectors/module_to_env/get_actions.py). Modules that return `ACTIONS` themselves
(scripted league agents) act here, on numpy observations.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ray.rllib.core.columns import Columns


@dataclass
class PolicyOutput:
    """Actions of one module's rows; `logits` is None for modules without a distribution."""

    actions: np.ndarray
    logits: torch.Tensor | None = None
    log_probs: torch.Tensor | None = None
    """Categorical outputs: log-probabilities of every action `[B, A]`."""

    def logp(self, actions: np.ndarray) -> np.ndarray:
        """Log-probabilities of `actions` (e.g. teacher-led overrides) under this output."""
        assert self.log_probs is not None
        return self.log_probs.gather(-1, torch.from_numpy(actions)[:, None])[:, 0].numpy()

    def extras(self) -> dict[str, np.ndarray]:
        if self.logits is None:
            return {}
        return {
            Columns.ACTION_LOGP: self.logp(self.actions).astype(np.float32),
            Columns.ACTION_DIST_INPUTS: self.logits.numpy(),
        }


def act(module: Any, obs: Any) -> PolicyOutput:
    """Actions of a scripted (parameter-free) module for a batch of numpy observations."""
    out = module.forward_inference({Columns.OBS: obs})
    return PolicyOutput(actions=np.asarray(out[Columns.ACTIONS], np.int64))


def eval_mode(modules: Any) -> None:
    """Put every torch module of a MultiRLModule in eval mode, once: RLlib's public forward
    wrappers switch a module to eval() and back to train() around every call, a recursive
    walk over all submodules that cost ~17% of sampling; the runner calls `_forward_*`."""
    modules.foreach_module(
        lambda _id, module: module.eval() if isinstance(module, torch.nn.Module) else None
    )


def trained_modules(modules: Any, module_ids: Any, chosen: Any) -> frozenset[str]:
    """The module ids a runner records decisions of: RLlib's `policies_to_train` (a list, or
    a callable asked per module id), every torch module when it is None."""
    if chosen is None or callable(chosen):
        torch_modules = {mid for mid in module_ids if hasattr(modules[mid], "parameters")}
        if callable(chosen):
            return frozenset(m for m in torch_modules if chosen(m, None))
        return frozenset(torch_modules)
    return frozenset(chosen)
