"""One batched forward pass of one RLModule over all the seats it plays (RLlib adapter).

Mirrors what RLlib's default module-to-env pieces do for a single step
(ray/rllib/connectors/module_to_env/get_actions.py): sample from the exploration
distribution built from `ACTION_DIST_INPUTS` (or take the inference distribution's
deterministic action when not exploring) and keep `ACTION_LOGP` and `ACTION_DIST_INPUTS`
for the learner. Modules that return `ACTIONS` themselves (scripted league agents) act
directly on numpy observations.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import tree
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical


@dataclass
class PolicyOutput:
    """Actions of one module's rows; `dist` is None for modules without a distribution."""

    actions: np.ndarray
    logits: torch.Tensor | None = None
    dist: Any = None
    state_in: dict[str, np.ndarray] | None = None
    """Recurrent modules: the state this step started from, per state key `[B, ...]`."""
    state_out: dict[str, np.ndarray] | None = None
    """Recurrent modules: the state after this step, per state key `[B, ...]`."""

    log_probs: torch.Tensor | None = None
    """Categorical outputs: log-probabilities of every action `[B, A]` (the fast path)."""

    def logp(self, actions: np.ndarray) -> np.ndarray:
        """Log-probabilities of `actions` (e.g. teacher-led overrides) under this output."""
        with torch.no_grad():
            index = torch.from_numpy(actions)
            if self.log_probs is not None:
                return self.log_probs.gather(-1, index[:, None])[:, 0].numpy()
            return self.dist.logp(index).numpy()

    def extras(self) -> dict[str, np.ndarray]:
        if self.logits is None:
            return {}
        return {
            Columns.ACTION_LOGP: self.logp(self.actions).astype(np.float32),
            Columns.ACTION_DIST_INPUTS: self.logits.numpy(),
        }


def act(
    module: Any,
    obs: Any,
    *,
    explore: bool,
    device: Any = None,
    state_in: dict[str, np.ndarray] | None = None,
) -> PolicyOutput:
    """Actions for a batch of observations `obs` (array or dict of arrays, leading B).

    Recurrent modules get `state_in` and a time axis of 1, as RLlib's
    AddTimeDimToBatchAndZeroPad gives them on env runners.
    """
    if not isinstance(module, torch.nn.Module):
        out = module.forward_inference({Columns.OBS: obs})
        return PolicyOutput(actions=np.asarray(out[Columns.ACTIONS], np.int64))

    def tensor(x: Any) -> torch.Tensor:
        return torch.as_tensor(x, device=device)

    if state_in is None:
        batch = {Columns.OBS: tree.map_structure(tensor, obs)}
    else:
        batch = {
            Columns.OBS: tree.map_structure(lambda x: tensor(x)[:, None], obs),
            Columns.STATE_IN: tree.map_structure(tensor, state_in),
        }
    with torch.no_grad():
        # The `_forward_*` methods: RLlib's public wrappers switch the module to eval() and
        # back to train() around every call, a recursive walk over all submodules that cost
        # ~17% of sampling. The runner keeps its modules in eval mode instead (`eval_mode`).
        if explore:
            out = module._forward_exploration(batch)
            dist_cls = module.get_exploration_action_dist_cls()
        else:
            out = module._forward_inference(batch)
            dist_cls = module.get_inference_action_dist_cls()
        if Columns.ACTIONS in out and Columns.ACTION_DIST_INPUTS not in out:
            return PolicyOutput(actions=out[Columns.ACTIONS].cpu().numpy().astype(np.int64))
        logits = out[Columns.ACTION_DIST_INPUTS].cpu()
        if state_in is not None:
            logits = logits[:, 0]
        output = _sample(logits, dist_cls, explore=explore)
    if state_in is not None:
        output.state_out = {k: v.detach().cpu().numpy() for k, v in out[Columns.STATE_OUT].items()}
    return output


def _sample(logits: torch.Tensor, dist_cls: type, *, explore: bool) -> PolicyOutput:
    """Draw actions. RLlib's `TorchCategorical` takes the fast path: the same distribution
    (softmax of the logits; argmax when not exploring) without building a validated
    `torch.distributions.Categorical` per step, which cost ~10% of sampling."""
    if dist_cls is TorchCategorical:
        log_probs = torch.log_softmax(logits, dim=-1)
        actions = _draw(log_probs) if explore else logits.argmax(dim=-1)
        return PolicyOutput(
            actions=actions.numpy().astype(np.int64), logits=logits, log_probs=log_probs
        )
    dist = dist_cls.from_logits(logits)
    if not explore:
        dist = dist.to_deterministic()
    actions = dist.sample().numpy().astype(np.int64)
    return PolicyOutput(actions=actions, logits=logits, dist=dist)


def _draw(log_probs: torch.Tensor) -> torch.Tensor:
    """One categorical draw per row by inverting the CDF (several times faster than
    `torch.multinomial` on small batches)."""
    cdf = log_probs.exp().cumsum(dim=-1)
    u = torch.rand(cdf.shape[0], 1) * cdf[:, -1:]
    return torch.searchsorted(cdf, u, right=True)[:, 0].clamp_(max=cdf.shape[-1] - 1)


def eval_mode(modules: Any) -> None:
    """Put every torch module of a MultiRLModule in eval mode, once (see `act`)."""
    modules.foreach_module(
        lambda _id, module: module.eval() if isinstance(module, torch.nn.Module) else None
    )
