"""Each function of the two seams to Ray's internals, exercised against the installed Ray
(`ray_runtime/ray_internals.py`, `ray_runtime/rllib_internals.py`; the inventory is
tests/unit/test_ray_internals.py, which checks that every seam function has a test here named
after it). A Ray upgrade that moves a touchpoint fails the test named after its function.

One small PPO on CartPole with one remote env runner, on the session's Ray, serves the tests
that need an Algorithm; the others build no more than a module.
"""

import contextlib
import functools
import importlib
import inspect
import logging
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import pytest
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module import EnvToModulePipeline
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec

from rl_platform.modules.config_notice import WithoutConfigNotice
from rl_platform.modules.lstm_module import LSTMActorCriticModule
from rl_platform.ray_runtime.ray_internals import (
    LOST_RAYLET,
    PRINT_HANDLER_NAME,
    RUNTIME_ENV_LOGGER,
    WORKER_OUTPUT,
    detected_cpus,
    handle_driver_prints,
    quiet_working_dir_packaging,
    take_local_node,
)
from rl_platform.ray_runtime.rllib_internals import (
    PHASE_CLOCK,
    RL_MODULE_CONFIG_NOTICE,
    SHARED_MODULES,
    around_learner_updates,
    around_weight_syncs,
    connector_factories,
    env_runner_actors,
    env_to_module_pipeline,
    forward_without_mode_switch,
    mark_trial_for_experiment_state,
    replace_training_step,
    set_iteration,
    skip_rl_module_config_notice,
)
from rl_platform.utils.patched_call import PatchedCall

OBS = gym.spaces.Box(-1.0, 1.0, (4,))
ACTIONS = gym.spaces.Discrete(2)
RAY_WORKER = importlib.import_module("ray._private.worker")


@pytest.fixture(scope="module")
def algo(ray_local) -> Iterator[Any]:
    config = (
        PPOConfig()
        .environment("CartPole-v1")
        .env_runners(num_env_runners=1, rollout_fragment_length=64)
        .training(train_batch_size_per_learner=64, minibatch_size=64, num_epochs=1)
        .reporting(
            min_time_s_per_iteration=0,
            min_sample_timesteps_per_iteration=0,
            min_train_timesteps_per_iteration=0,
        )
        .debugging(seed=0)
    )
    built = config.build_algo()
    yield built
    built.stop()


def _noting(calls: list[Any], name: str, *, kwargs: bool = False) -> Callable:
    """A handler that notes `name` (or the call's keyword arguments) and calls on."""

    def handler(call: Callable) -> Callable:
        def noted(*args: Any, **kw: Any) -> Any:
            calls.append(kw if kwargs else name)
            return call(*args, **kw)

        return noted

    return handler


def _stock_module_spec() -> RLModuleSpec:
    spec = PPOConfig().get_default_rl_module_spec()
    spec.observation_space, spec.action_space = OBS, ACTIONS
    spec.model_config = DefaultModelConfig(fcnet_hiddens=[8])
    return spec


@contextlib.contextmanager
def _fresh_notices(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """What Ray's deprecation logger says from here on, as in a fresh process (`log_once`'s
    memory emptied, and given back after)."""
    import ray.util.debug

    monkeypatch.setattr(ray.util.debug, "_logged", set())
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    deprecation = logging.getLogger("ray._common.deprecation")
    deprecation.addHandler(handler)
    try:
        yield said
    finally:
        deprecation.removeHandler(handler)


@pytest.fixture
def fresh_printer(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Ray's own printer and the dispatcher's handlers as they are, for this test only (a patch
    this process made before is given back after)."""
    printer = RAY_WORKER.print_to_stdstream
    original = printer.original if isinstance(printer, PatchedCall) else printer
    monkeypatch.setattr(RAY_WORKER, "print_to_stdstream", original)
    dispatcher = RAY_WORKER.global_worker_stdstream_dispatcher
    monkeypatch.setattr(dispatcher, "handlers", list(dispatcher.handlers))
    return dispatcher


# ----- Ray core ----------------------------------------------------------------------------
def test_handle_driver_prints_wraps_the_printer_rays_error_listener_looks_up(
    fresh_printer,
) -> None:
    calls: list[str] = []
    swallowed: list[list[str]] = []

    def swallow(printer: Callable) -> Callable:
        def to_the_list(batch: dict, *args: Any, **kwargs: Any) -> None:
            calls.append(WORKER_OUTPUT)
            swallowed.append(batch["lines"])

        return to_the_list

    handle_driver_prints(WORKER_OUTPUT, swallow)
    handle_driver_prints(LOST_RAYLET, _noting(calls, LOST_RAYLET))
    # The error listener prints the GCS's notices through the module's name at each call.
    assert "print_to_stdstream" in RAY_WORKER.listen_error_messages.__code__.co_names
    batch = {"lines": ["A worker died"], "pid": "raylet", "is_err": False}
    RAY_WORKER.print_to_stdstream(batch, ignore_prefix=False)
    assert calls == [LOST_RAYLET, WORKER_OUTPUT] and swallowed == [["A worker died"]]


def test_handle_driver_prints_rebinds_the_worker_output_printer_of_ray_init(
    ray_local, fresh_printer
) -> None:
    # `ray.init(log_to_driver=True)` registers the printer under this name (the session's Ray
    # runs without it: registered here as `ray.init` does).
    assert f'"{PRINT_HANDLER_NAME}"' in inspect.getsource(RAY_WORKER.connect)
    dispatcher = fresh_printer
    dispatcher.add_handler(
        PRINT_HANDLER_NAME, functools.partial(RAY_WORKER.print_to_stdstream, ignore_prefix=False)
    )
    seen: list[Any] = []
    handle_driver_prints(WORKER_OUTPUT, lambda printer: lambda batch, **kw: seen.append(kw))
    dispatcher.emit({"lines": ["hello"], "pid": 123, "is_err": False})
    assert seen == [{"ignore_prefix": False}]


def test_take_local_node_hands_the_raylet_over(ray_local) -> None:
    node = RAY_WORKER._global_node
    try:
        taken = take_local_node()
        assert taken is not None and taken.node is node
        assert RAY_WORKER._global_node is None  # `ray.shutdown` now leaves the processes alone
        assert taken.raylets and all(process.poll() is None for process in taken.raylets)
        assert taken.others and all(hasattr(process, "pid") for process in taken.others)
        assert taken.node.is_head() and callable(taken.node.destroy_external_storage)
    finally:
        RAY_WORKER._global_node = node
    assert "_global_node" in inspect.getsource(RAY_WORKER.shutdown)


def test_detected_cpus_is_rays_own_count() -> None:
    from ray._private.utils import get_num_cpus  # no fallback here: it must be there

    assert detected_cpus() == float(get_num_cpus()) > 0


def test_quiet_working_dir_packaging_quiets_the_packaging_logger() -> None:
    packaging = importlib.import_module("ray._private.runtime_env.packaging")
    ray_logger = packaging.default_logger
    assert ray_logger.name.startswith(RUNTIME_ENV_LOGGER + ".")
    with quiet_working_dir_packaging():
        assert not ray_logger.isEnabledFor(logging.WARNING)
        assert ray_logger.isEnabledFor(logging.ERROR)
    assert ray_logger.isEnabledFor(logging.WARNING)


# ----- RLlib: the Algorithm -----------------------------------------------------------------
def test_set_iteration_is_the_count_the_next_iteration_continues(algo) -> None:
    later = algo.iteration + 5
    set_iteration(algo, later)
    assert algo.iteration == later
    assert algo.train()["training_iteration"] == later + 1


def test_around_learner_updates_wraps_the_updates_of_a_training_step(algo) -> None:
    calls: list[str] = []
    around_learner_updates(algo.learner_group, PHASE_CLOCK, _noting(calls, "update"))
    algo.train()
    assert calls and set(calls) == {"update"}


def test_around_weight_syncs_times_outside_the_skip_and_sees_rllibs_keywords(algo) -> None:
    calls: list[Any] = []
    around_weight_syncs(algo.env_runner_group, SHARED_MODULES, _noting(calls, "", kwargs=True))
    around_weight_syncs(algo.env_runner_group, PHASE_CLOCK, _noting(calls, PHASE_CLOCK))
    algo.train()
    clock, keywords = calls[:2]
    assert clock == PHASE_CLOCK
    # What the shared-modules skip reads (rl_platform/env_runner/shared_modules.py).
    assert keywords["from_worker_or_learner_group"] is algo.learner_group
    assert set(keywords["policies"]) == {"default_policy"}


def test_replace_training_step_is_what_an_iteration_runs(algo) -> None:
    steps: list[int] = []
    replace_training_step(algo, lambda: steps.append(1))
    try:
        algo.train()
    finally:
        del algo.training_step  # the class's own again
    assert steps == [1]


def test_env_runner_actors_are_the_remote_runners_by_index(algo) -> None:
    actors = env_runner_actors(algo.env_runner_group)
    assert list(actors) == [1]
    assert ray.get(actors[1].ping.remote(), timeout=60) == "pong"


# ----- RLlib: connectors ----------------------------------------------------------------------
def test_connector_factories_are_those_given_to_env_runners() -> None:
    def env_to_module(env: Any, spaces: Any, device: Any) -> list:
        return []

    def module_to_env(env: Any, spaces: Any) -> list:
        return []

    config = PPOConfig().env_runners(
        env_to_module_connector=env_to_module, module_to_env_connector=module_to_env
    )
    assert connector_factories(config) == (env_to_module, module_to_env)
    assert connector_factories(PPOConfig()) == (None, None)


def test_env_to_module_pipeline_of_a_remote_runner(algo) -> None:
    names = algo.env_runner_group.foreach_env_runner(
        lambda runner: type(env_to_module_pipeline(runner)).__name__, local_env_runner=False
    )
    assert names == [EnvToModulePipeline.__name__]


# ----- RLlib: RLModules -----------------------------------------------------------------------
def test_forward_without_mode_switch_runs_rllibs_override_points_without_switching_modes(
    monkeypatch,
) -> None:
    module = _stock_module_spec().build()
    switches: list[str] = []
    monkeypatch.setattr(module, "eval", lambda: switches.append("eval"))
    batch = {Columns.OBS: torch.zeros(3, 4)}
    for explore in (True, False):
        out = forward_without_mode_switch(module, batch, explore=explore)
        assert out[Columns.ACTION_DIST_INPUTS].shape == (3, 2)
    assert switches == []
    module.forward_inference(batch)  # the public wrapper does switch
    assert switches == ["eval"]


def test_skip_rl_module_config_notice_takes_the_key_rllib_logs_it_under(monkeypatch) -> None:
    with _fresh_notices(monkeypatch) as said:
        _stock_module_spec().build()  # RLlib's own module: RLlib's notice
    assert any(RL_MODULE_CONFIG_NOTICE in line for line in said), said
    with _fresh_notices(monkeypatch) as said:
        skip_rl_module_config_notice()
        _stock_module_spec().build()
    assert said == []


def test_skip_rl_module_config_notice_keeps_our_modules_quiet_in_a_plain_rllib_script(
    monkeypatch,
) -> None:
    spec = RLModuleSpec(
        module_class=LSTMActorCriticModule,
        observation_space=OBS,
        action_space=ACTIONS,
        model_config={"encoder": [8], "lstm_cell_size": 8, "actor": [8], "critic": [8]},
    )
    with _fresh_notices(monkeypatch) as said:
        spec.build()
    assert said == []
    files = ["masked_mlp_module", "off_policy_modules", "recurrent_module", "scripted_module"]
    files += ["lstm_module", "transformer_lstm_module"]
    ours = [
        cls
        for name in files
        for cls in vars(importlib.import_module(f"rl_platform.modules.{name}")).values()
        if isinstance(cls, type) and issubclass(cls, RLModule) and cls.__module__.startswith("rl_")
    ]
    assert len(ours) >= 7 and all(WithoutConfigNotice in cls.__mro__ for cls in ours), ours


# ----- Tune ---------------------------------------------------------------------------------
def test_mark_trial_for_experiment_state_puts_it_in_the_next_save() -> None:
    from ray.tune.execution.tune_controller import TuneController

    class Trial:
        trial_id = "t1"

        def get_json_state(self) -> str:
            return "state of t1"

    controller = TuneController.__new__(TuneController)  # only what saving the state reads
    controller._trials_to_cache, controller._trial_metadata = set(), {}
    mark_trial_for_experiment_state(controller, Trial())
    assert controller._get_trial_checkpoints() == {"t1": "state of t1"}
    assert "_get_trial_checkpoints" in inspect.getsource(TuneController.save_to_dir)
