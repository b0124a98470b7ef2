"""The off-policy array path (SAC, DQN) inside a stock RLlib Algorithm (RLlib adapter).

RLlib's DQN/SAC `training_step` (ray/rllib/algorithms/dqn/dqn.py, `_training_step_new_api_stack`)
samples episodes from the env runners, adds them to an episode replay buffer, samples
episodes back, runs learner connectors and `learner_group.update`, then syncs weights: per
env step, Python objects and pipelines (issue #57). Here, in the driver process:

1. `TransitionCollector` steps `env.envs_per_runner` env copies with the learner's own nets
   and writes rows into a `ReplayStore` on the learner's device (rl_platform/sampling/);
   uniform random actions until `num_steps_sampled_before_learning_starts`;
2. after each step, once learning has started, `updates_per_env_step` updates per env step
   (fractions carried over) by the array learner (rl_platform/learners/off_policy.py), with
   DQN's target synced every `target_network_update_freq` env steps, as RLlib's DQN learner;
3. once per iteration, the returns and the learner's device-summed metrics are read and
   logged into the Algorithm's `MetricsLogger` under RLlib's keys (`env_runners/...`,
   `learners/<module>/...`), so metrics.jsonl, `rlp plot` and `stop.return_mean` read them
   as they read RLlib's own.

An iteration is `min_sample_timesteps_per_iteration` env steps (RLlib's SAC: 100, DQN: 1000),
counted, never timed, so a resumed run's iterations match the uninterrupted run's. No actor
acts on its own copy and no weights move: acting reads the parameters the update just wrote.
RLlib still builds its local env runner (idle here) and its replay buffer (kept tiny).

`OffPolicyCallback` builds the driver once the Algorithm exists and is a checkpoint
participant (rl_platform/run/loop.py, `checkpoint_participants`): the replay store
(`checkpoint.replay`) and the collector's RNGs and episode window travel as checkpoint parts.
"""

from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch
from loguru import logger
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.callbacks.callbacks import RLlibCallback

from rl_platform.base.errors import UserError
from rl_platform.env_adapters.registry import make_env
from rl_platform.learners.off_policy import OFF_POLICY_KEY, OffPolicyLearnerSettings
from rl_platform.ray_runtime.rllib_internals import replace_training_step
from rl_platform.replay.layout import layout_for
from rl_platform.replay.store import ReplayStore
from rl_platform.rllib.config_callbacks import with_callback
from rl_platform.rllib.facts import RunFacts
from rl_platform.rllib.off_policy_metrics import log_iteration
from rl_platform.rllib.off_policy_settings import DriverSettings, driver_settings, learner_settings
from rl_platform.sampling.off_policy_acting import DQNActing, SACActing, epsilon_at
from rl_platform.sampling.transition_collector import TransitionCollector
from rl_platform.spec import ExperimentSpec

REPLAY_PART = "replay"
"""Checkpoint part of the replay store (`ReplayStore.state_dict`, arrays)."""
DRIVER_PART = "off_policy"
"""Checkpoint part of the driver: counters, the collector's RNGs and episode window."""
RLLIB_BUFFER = {"type": "EpisodeReplayBuffer", "capacity": 1000}
"""RLlib's own buffer, which DQN's setup builds whatever the path: unused here, kept small."""


def off_policy_extension(
    config: AlgorithmConfig, spec: ExperimentSpec, *, facts: RunFacts
) -> AlgorithmConfig:
    """The array path's learner settings, iteration size and driver callback (module
    docstring); the config unchanged where the spec learns with RLlib's SAC/DQN."""
    if spec.algo not in ("SAC", "DQN"):
        return config
    choice = spec.learner_choice()
    logger.info("learner: {} ({})", choice.kind, choice.reason)
    if choice.kind != "array":
        if spec.algo == "SAC" and spec.training.critic_loss != "huber":
            logger.info(
                "RLlib's SAC regresses its critics with Huber, whatever training.critic_loss"
            )
        return config
    _check_spaces(spec, facts)
    steps = int(config.min_sample_timesteps_per_iteration or 1)
    settings = driver_settings(spec, facts=facts, iteration_env_steps=steps)
    learner: OffPolicyLearnerSettings = learner_settings(spec, facts=facts)
    config = config.learners(
        learner_config_dict={**config.learner_config_dict, OFF_POLICY_KEY: learner}
    )
    config = config.training(replay_buffer_config=dict(RLLIB_BUFFER))
    # One training_step per iteration: the step itself counts its env steps.
    config = config.reporting(
        min_time_s_per_iteration=0,
        min_sample_timesteps_per_iteration=0,
        min_train_timesteps_per_iteration=0,
    )
    bound = type("BoundOffPolicyCallback", (OffPolicyCallback,), {"settings": settings})
    return with_callback(config, bound)


def _check_spaces(spec: ExperimentSpec, facts: RunFacts) -> None:
    """One line for spaces the path does not take (Box observations; Box actions for SAC,
    Discrete for DQN), before anything is built."""
    observation, action = next(iter(facts.agent_spaces.values()))
    wanted = gym.spaces.Box if spec.algo == "SAC" else gym.spaces.Discrete
    if isinstance(observation, gym.spaces.Box) and isinstance(action, wanted):
        return
    raise UserError(
        f"training.learner array: {spec.algo} on the replay store takes Box observations and "
        f"{wanted.__name__} actions; env {spec.env.id!r} has {observation} and {action}; set "
        "training.learner: rllib"
    )


def local_learner(algorithm: Any) -> Any:
    """The learner in this process (`resources.learners: 0`), through the public
    `LearnerGroup.foreach_learner`, which hands a local learner to the function as is."""
    if not algorithm.learner_group.is_local:
        raise RuntimeError("the off-policy array path learns in the driver (learners: 0)")
    (result,) = list(algorithm.learner_group.foreach_learner(lambda learner: learner))
    return result.get()


@dataclass
class DriverCounters:
    env_steps: int = 0
    update_credit: float = 0.0
    """Updates owed but not yet run (the fraction of `updates_per_env_step`)."""
    last_target_sync: int = 0


class OffPolicyDriver:
    """Acting, replay and updates of one run (module docstring)."""

    def __init__(self, algorithm: Any, settings: DriverSettings) -> None:
        self.algorithm, self.settings = algorithm, settings
        self.learner = local_learner(algorithm)
        module = self.learner.module[settings.module_id]
        device = next(module.parameters()).device
        envs = [
            make_env(settings.env_id, list(settings.wrappers), dict(settings.env_kwargs))
            for _ in range(settings.num_envs)
        ]
        observation_space, action_space = envs[0].observation_space, envs[0].action_space
        self.store = ReplayStore(
            layout=layout_for(observation_space, action_space),
            capacity=settings.capacity,
            num_envs=settings.num_envs,
            device=device,
            replay=settings.replay,
            n_step=settings.n_step,
            gamma=settings.gamma,
            seed=settings.seed,
        )
        generator = torch.Generator(device=device)
        generator.manual_seed(settings.acting_seed)
        if settings.algo == "SAC":
            self.acting: Any = SACActing(
                module.actor, low=action_space.low, high=action_space.high, generator=generator
            )
        else:
            self.acting = DQNActing(
                module.q_net, num_actions=int(action_space.n), generator=generator
            )
        self.collector = TransitionCollector(
            envs=envs, store=self.store, acting=self.acting, seeds=settings.env_seeds
        )
        self.counters = DriverCounters()

    def training_step(self) -> None:
        """One iteration: collect, store, update (module docstring); logs, returns None."""
        settings, counters = self.settings, self.counters
        vector_steps = -(-settings.iteration_env_steps // settings.num_envs)
        for _ in range(vector_steps):
            warm_up = counters.env_steps < settings.learning_starts
            if settings.epsilon is not None:
                self.acting.epsilon = epsilon_at(counters.env_steps, **settings.epsilon)
            self.collector.step(random=warm_up)
            counters.env_steps += settings.num_envs
            if counters.env_steps >= settings.learning_starts:
                self.learn()
        log_iteration(
            self.algorithm.metrics,
            env_steps=vector_steps * settings.num_envs,
            collector=self.collector,
            learner_metrics=self.learner.read_metrics(),
            module_id=settings.module_id,
        )

    def learn(self) -> None:
        """The updates owed after one vector step, and DQN's target sync when due (timed as
        `perf/learn_s` by the training loop: `OffPolicyCallback.learning_methods`)."""
        settings, counters = self.settings, self.counters
        counters.update_credit += settings.num_envs * settings.update_rate
        owed = int(counters.update_credit)
        if owed == 0:
            return
        counters.update_credit -= owed
        self.learner.update_from_store(self.store, owed)
        sync = settings.target_sync
        if sync is not None and counters.env_steps - counters.last_target_sync >= sync.every:
            self.learner.sync_target(sync.tau)
            counters.last_target_sync = counters.env_steps

    def checkpoint_parts(self) -> dict[str, Any]:
        counters = self.counters
        driver = {
            "env_steps": counters.env_steps,
            "update_credit": counters.update_credit,
            "last_target_sync": counters.last_target_sync,
            "collector": self.collector.state_dict(),
        }
        parts: dict[str, Any] = {DRIVER_PART: driver}
        if self.settings.checkpoint_replay:
            state = self.store.state_dict()
            parts[REPLAY_PART] = {key: value.cpu().numpy() for key, value in state.items()}
        return parts

    def restore_parts(self, parts: dict[str, Any]) -> None:
        driver = parts.get(DRIVER_PART)
        if driver is None:
            logger.warning(
                "off-policy: the checkpoint has no {} part; starting afresh", DRIVER_PART
            )
            return
        self.counters = DriverCounters(
            env_steps=int(driver["env_steps"]),
            update_credit=float(driver["update_credit"]),
            last_target_sync=int(driver["last_target_sync"]),
        )
        replay = parts.get(REPLAY_PART)
        if replay is None:
            logger.warning(
                "resume: the checkpoint holds no replay store (checkpoint.replay: false); "
                "it refills from empty, so this run no longer continues exactly"
            )
        else:
            self.store.load_state_dict(
                {key: torch.from_numpy(np.asarray(value)) for key, value in replay.items()}
            )
        # After the rows: the episodes in flight at the checkpoint are cut in the store.
        self.collector.load_state_dict(driver["collector"])
        if cut := len(driver["collector"].get("in_flight", [])):
            logger.info(
                "resume: {} episode(s) were in flight at the checkpoint; they end there "
                "(truncated) and every env starts a new episode (docs/off_policy.md, Resuming)",
                cut,
            )


class OffPolicyCallback(RLlibCallback):
    """Builds the driver when the Algorithm is built; a checkpoint participant."""

    settings: ClassVar[DriverSettings | None] = None

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        assert self.settings is not None, "bind settings with off_policy_extension"
        self.driver = OffPolicyDriver(algorithm, self.settings)
        replace_training_step(algorithm, self.driver.training_step)

    def learning_methods(self) -> list[tuple[Any, str]]:
        """(object, method name) of the calls that learn: the training loop times them as
        `perf/learn_s` (rl_platform/run/loop.py, `instrument`), the rest of the step being
        acting (`perf/sample_s`); this path does not call `learner_group.update`."""
        return [(self.driver, "learn")]

    def checkpoint_parts(self) -> dict[str, Any]:
        return self.driver.checkpoint_parts()

    def restore_parts(self, parts: Any, *, algorithm: Any) -> None:
        self.driver.restore_parts(dict(parts))
