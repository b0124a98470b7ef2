"""Acting with the learner's own modules when both live in one process on one device (#48).

With the array learner, no remote env runner (`resources.env_runners: 0`) and no remote
learner (`resources.learners: 0`), the driver holds the runner that acts and the learner that
trains, and RLlib copies the trained modules' weights from one to the other after every update
(`EnvRunnerGroup.sync_weights`: the learner's state read out, then loaded into the runner).
When the runner acts on the learner's device, `share_learner_modules` puts the learner's
trained modules into the runner's `MultiRLModule` instead, so acting reads the parameters the
optimizer just wrote, and the copy is skipped (a handler on the group's `sync_weights`,
`ray_runtime/rllib_internals.around_weight_syncs`). The modules hold no dropout or batch
normalization, so the learner's train mode and the runner's eval mode compute the same
function.

Not with `resources.overlap`: there the runner acts during the update, on the weights of the
update before (one policy version of lag, the decoupled PPO it trains with), which a shared
module could not keep.
"""

import functools
from collections.abc import Callable, Collection
from typing import Any

import torch
from loguru import logger
from ray.rllib.callbacks.callbacks import RLlibCallback

from rl_platform.ray_runtime.rllib_internals import SHARED_MODULES, around_weight_syncs


def share_learner_modules(algorithm: Any) -> frozenset[str]:
    """Let the local runner act with the local learner's trained modules (module docstring);
    the module ids now shared (none where the layout does not allow it)."""
    runner = getattr(algorithm, "env_runner", None)
    learner_group = algorithm.learner_group
    if runner is None or not learner_group.is_local or algorithm.config.num_env_runners > 0:
        return frozenset()
    settings = getattr(runner, "settings", None)
    if settings is None or settings.overlap or not settings.array_learner:
        return frozenset()
    # A local learner group hands its learner itself to `foreach_learner`.
    (learner,) = [result.get() for result in learner_group.foreach_learner(lambda lrn: lrn)]
    if torch.device(settings.acting_device) != torch.device(learner.device):
        return frozenset()
    trained = [
        module_id
        for module_id in learner.module.keys()  # noqa: SIM118 (a MultiRLModule, not a dict)
        if learner.should_module_be_updated(module_id) and module_id in set(runner.module.keys())
    ]
    for module_id in trained:
        runner.module.add_module(module_id, learner.module[module_id], override=True)
    runner.restart_acting()
    shared = frozenset(trained)
    if shared:
        skip = functools.partial(_skipping, shared=shared, learner_group=learner_group)
        around_weight_syncs(algorithm.env_runner_group, SHARED_MODULES, skip)
        logger.info("acting reads the learner's modules ({}): no weight copy", sorted(shared))
    return shared


def _skipping(
    sync: Callable[..., Any], *, shared: frozenset[str], learner_group: Any
) -> Callable[..., Any]:
    """`sync` that does nothing when it would copy only the shared modules from the learner
    group."""

    def sync_weights(*args: Any, **kwargs: Any) -> Any:
        source = kwargs.get("from_worker_or_learner_group", args[0] if args else None)
        policies: Collection[str] | None = kwargs.get("policies")
        if source is learner_group and policies is not None and set(policies) <= shared:
            return None
        return sync(*args, **kwargs)

    return sync_weights


class ShareLearnerModules(RLlibCallback):
    """Calls `share_learner_modules` once the algorithm is built."""

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        share_learner_modules(algorithm)
