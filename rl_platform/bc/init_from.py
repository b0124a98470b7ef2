"""`init_from: CHECKPOINT`: start training from another run's policy weights (e.g. BC pretraining).

At algorithm init the checkpoint's main module weights (`rl_platform.rllib.algorithm_state.
module_weights`, our pickle-free format) are copied into the new run's main module on every
learner, then synced to the env runners. Parameters are matched by name and shape: every policy
tensor must fit (same `model:`), value-function tensors that do not (a BC run has none) keep
their fresh initialization. A resumed run restores its own checkpoint
afterwards, which overrides these initial weights.
"""

import functools
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from loguru import logger
from ray.rllib.callbacks.callbacks import RLlibCallback

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import trained_module_in


def load_init_weights(source: str | Path) -> tuple[str, dict[str, np.ndarray]]:
    """(source module id, weights) of the main module in a run or checkpoint folder."""
    from rl_platform.rllib.algorithm_state import ALGORITHM_PART, module_weights
    from rl_platform.storage.checkpoints import load_checkpoint, resolve_checkpoint

    path = Path(str(source).removeprefix("checkpoint://")).expanduser()
    if not path.exists():
        raise UserError(f"init_from: {path} does not exist")
    loaded = load_checkpoint(resolve_checkpoint(path))
    weights = module_weights(loaded.parts[ALGORITHM_PART])
    module_id = trained_module_in(weights)
    if module_id is None:
        raise UserError(f"init_from: {loaded.path} has no main module (has {sorted(weights)})")
    tensors = weights[module_id]
    logger.info("init_from: {} module {!r} ({} tensors)", loaded.path, module_id, len(tensors))
    return module_id, tensors


def is_value_tensor(name: str) -> bool:
    """Value-function parameters (RLlib's `vf`, `critic_encoder`; our modules' `critic`)."""
    return "vf" in name.split(".")[0] or "critic" in name


def matching_weights(
    current: dict[str, Any], loaded: dict[str, np.ndarray]
) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """(tensors to load, names of `current` left as is, policy tensors that do not fit).

    A tensor fits when `current` has its name with the same shape. Policy tensors that do not
    fit mean another architecture: the caller refuses rather than half-loading a policy.
    """
    fits = {
        name: array
        for name, array in loaded.items()
        if name in current and tuple(np.shape(current[name])) == tuple(array.shape)
    }
    misfits = sorted(name for name in loaded if name not in fits and not is_value_tensor(name))
    return fits, sorted(set(current) - set(fits)), misfits


def load_into_learner(loaded: dict[str, np.ndarray], learner: Any) -> list[str]:
    """Copy the checkpoint's tensors into the learner's main module; returns names kept fresh."""
    module_id = trained_module_in(learner.module.keys())
    if module_id is None:
        raise UserError("init_from: this run has no main module to initialize")
    module = learner.module[module_id]
    fits, kept, misfits = matching_weights(module.get_state(), loaded)
    if misfits or not fits:
        shown = ", ".join(misfits[:3]) or "all"
        raise UserError(
            f"init_from: the checkpoint's policy tensors ({shown}) do not fit module "
            f"{module_id!r}; use the same `model:` (type, hidden, vf_share_layers) as the run "
            "it comes from"
        )
    module.set_state(fits)
    return kept


class InitFromCallback(RLlibCallback):
    """Loads `source` into the main module at algorithm init (bound by `bc_extension`)."""

    source: ClassVar[str | None] = None

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        if self.source is None:
            return
        _, loaded = load_init_weights(self.source)
        learner_group = algorithm.learner_group
        results = learner_group.foreach_learner(functools.partial(load_into_learner, loaded))
        kept = next((result.get() for result in results), [])
        if kept:
            logger.info("init_from: kept fresh {} (not in the checkpoint)", ", ".join(kept))
        algorithm.env_runner_group.sync_weights(
            from_worker_or_learner_group=learner_group, inference_only=True
        )
