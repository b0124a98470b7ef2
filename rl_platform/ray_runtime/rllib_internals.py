"""The one seam to RLlib's and Tune's internals (Ray 2.60.0): every private attribute of an
RLlib or Tune object and every patch of one in rl_platform is here, each behind a named
function that says why no public API serves. Ray core's are in `ray_internals.py` beside this
file. It sits in the lowest adapter folder, not in `rllib/`, because the env runner and our
RLModules need it too, and `rllib/` imports them.

Our own subclasses of RLlib and Tune classes may use the internals of their bases through
`self` and `super()`; `tests/unit/test_ray_internals.py` lists each of those uses and fails,
naming the file and line, on one it does not list or on any other use outside the seams;
`tests/integration/test_ray_touchpoints.py` exercises each function here against the
installed Ray, so an upgrade fails one named test per touchpoint that moved. Importing this
seam loads no Ray: its functions take the objects they reach into.
"""

from collections.abc import Callable
from typing import Any

from rl_platform.utils.patched_call import Handler, patch_call

PHASE_CLOCK = "phase_clock"
SHARED_MODULES = "shared_modules"
LEARNER_UPDATE_HANDLERS = (PHASE_CLOCK,)
WEIGHT_SYNC_HANDLERS = (PHASE_CLOCK, SHARED_MODULES)
"""Outermost first: the phase clock (rl_platform/run/loop.py) times every weight sync, one
that the shared modules skip (rl_platform/env_runner/shared_modules.py) included."""
RL_MODULE_CONFIG_NOTICE = "RLModule(config=[RLModuleConfig object])"
"""The key RLlib's `RLModuleConfig` deprecation is logged once under (its `@Deprecated`'s
`old`, ray/rllib/core/rl_module/rl_module.py)."""


# ----- the Algorithm ------------------------------------------------------------------------
def set_iteration(algorithm: Any, iteration: int) -> None:
    """Set the Algorithm's iteration counter (read back as `algorithm.iteration`). Why: Tune's
    Trainable keeps it in `_iteration`, outside `get_state()`, and restores it only from its
    own checkpoints, which rl_platform does not write; it has no setter."""
    algorithm._iteration = iteration


def replace_training_step(algorithm: Any, training_step: Callable[[], Any]) -> None:
    """Make `training_step` the Algorithm's. Why: RLlib offers no config setting for a training
    step other than subclassing `Algorithm`, which this project does not do: an instance
    attribute shadows the method that `Algorithm._run_one_training_iteration` calls."""
    algorithm.training_step = training_step


def around_learner_updates(learner_group: Any, name: str, handler: Handler) -> None:
    """`handler` (one of `LEARNER_UPDATE_HANDLERS`) wraps every `learner_group.update` call.
    Why: RLlib has no callback around a learner group's update."""
    patch_call(learner_group, "update", LEARNER_UPDATE_HANDLERS).set(name, handler)


def around_weight_syncs(env_runner_group: Any, name: str, handler: Handler) -> None:
    """`handler` (one of `WEIGHT_SYNC_HANDLERS`) wraps every `env_runner_group.sync_weights`
    call. Why: RLlib has no callback around a weight sync, nor a setting to skip one."""
    patch_call(env_runner_group, "sync_weights", WEIGHT_SYNC_HANDLERS).set(name, handler)


def env_runner_actors(env_runner_group: Any) -> dict[int, Any]:
    """Every remote env runner's actor by RLlib's index (1, 2, ...), in service or not. Why:
    `EnvRunnerGroup` names its healthy runners (`healthy_env_runner_ids`) but hands out no
    actor handle, and a runner it holds out of service is reached only through its actor
    manager."""
    return dict(env_runner_group._worker_manager.actors())


# ----- connectors ---------------------------------------------------------------------------
def connector_factories(config: Any) -> tuple[Any, Any]:
    """The `env_to_module_connector` and `module_to_env_connector` given to
    `config.env_runners()` (None where not set). Why: `AlgorithmConfig` keeps them without a
    getter; its `build_*_connector` build whole pipelines, which need an env."""
    return config._env_to_module_connector, config._module_to_env_connector


def env_to_module_pipeline(env_runner: Any) -> Any | None:
    """An env runner's env-to-module connector pipeline (None if it has none). Why: RLlib's
    env runners keep it private (`_env_to_module`) and hand it to nothing outside the runner."""
    return getattr(env_runner, "_env_to_module", None)


# ----- RLModules ----------------------------------------------------------------------------
def forward_without_mode_switch(
    module: Any, batch: dict[str, Any], *, explore: bool
) -> dict[str, Any]:
    """`module`'s exploration (or inference) forward pass in the train/eval mode it is in.
    Why: TorchRLModule's public `forward_exploration`/`forward_inference` call `eval()` and
    `train()` around every pass, each a walk over every submodule (about as costly as a small
    MLP's forward); acting keeps its modules in eval mode. `_forward_exploration` and
    `_forward_inference` are RLlib's override points, which those wrappers call."""
    return module._forward_exploration(batch) if explore else module._forward_inference(batch)


def skip_rl_module_config_notice() -> None:
    """Keep RLlib's `RLModuleConfig` deprecation notice out of this process. Why: RLlib 2.60's
    own `RLModule.__init__` builds the deprecated `RLModuleConfig` for every module, whose
    `@Deprecated` then logs "`RLModule(config=[RLModuleConfig object])` has been deprecated
    ... will raise an error in the future" though nobody passed one; no argument turns it
    off. It is logged once per process under `RL_MODULE_CONFIG_NOTICE` (`ray.util.log_once`),
    so taking that key first keeps it off."""
    from ray.util import log_once

    log_once(RL_MODULE_CONFIG_NOTICE)


# ----- Tune ---------------------------------------------------------------------------------
def mark_trial_for_experiment_state(tune_controller: Any, trial: Any) -> None:
    """Have Tune write `trial` into its next saved experiment state. Why: Tune's stop of a trial
    without an actor (a paused one) sets it TERMINATED without marking it for the experiment
    state (`_schedule_trial_stop` returns before `_mark_trial_to_checkpoint`,
    ray/tune/execution/tune_controller.py), and a scheduler has no public way to mark it."""
    tune_controller._mark_trial_to_checkpoint(trial)
