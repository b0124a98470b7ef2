"""What the off-policy array path reads of a spec, resolved once at config time (RLlib
adapter side, no RLlib import): the driver's settings (rl_platform/rllib/off_policy.py) and
the learner's (rl_platform/learners/off_policy.py)."""

from dataclasses import dataclass
from typing import Any, Literal

from rl_platform.learners.dqn_step import DQNSettings
from rl_platform.learners.off_policy import OffPolicyLearnerSettings
from rl_platform.learners.sac_step import SACSettings
from rl_platform.rllib.facts import RunFacts
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.training import DQNTraining, SACTraining

DQN_TAU = 1.0
"""RLlib's DQN default `tau`: the target is a copy (the spec has no DQN `tau`)."""


@dataclass(frozen=True)
class TargetSync:
    every: int
    """Env steps between syncs (`target_network_update_freq`)."""
    tau: float


@dataclass(frozen=True)
class DriverSettings:
    algo: Literal["SAC", "DQN"]
    module_id: str
    env_id: str
    wrappers: tuple[str, ...]
    env_kwargs: dict[str, Any]
    num_envs: int
    env_seeds: tuple[int | None, ...]
    seed: int
    """The replay store's sampling generator."""
    acting_seed: int
    """The acting draws' generator."""
    capacity: int
    replay: Literal["uniform", "prioritized"]
    n_step: int
    gamma: float
    learning_starts: int
    update_rate: float
    iteration_env_steps: int
    checkpoint_replay: bool
    epsilon: dict[str, Any] | None = None
    """DQN: `epsilon_at`'s `timesteps` and `final`."""
    target_sync: TargetSync | None = None
    """DQN's target sync; SAC moves its targets in every update."""


def _training(spec: ExperimentSpec) -> DQNTraining | SACTraining:
    training = spec.training
    assert isinstance(training, DQNTraining | SACTraining)
    return training


def driver_settings(
    spec: ExperimentSpec, *, facts: RunFacts, iteration_env_steps: int
) -> DriverSettings:
    t, num_envs = _training(spec), spec.env.envs_per_runner
    dqn = isinstance(t, DQNTraining)
    return DriverSettings(
        algo="DQN" if dqn else "SAC",
        module_id=facts.trained_module_ids[0],
        env_id=spec.env.id,
        wrappers=tuple(spec.env.wrappers),
        env_kwargs=dict(spec.env.kwargs),
        num_envs=num_envs,
        env_seeds=tuple(facts.env_seeds.env_copy(worker=0, vector=i) for i in range(num_envs)),
        seed=facts.seeds.replay(),
        acting_seed=facts.seeds.off_policy_acting(),
        capacity=t.replay_capacity,
        replay=t.replay,
        n_step=t.n_step,
        gamma=t.gamma,
        learning_starts=t.num_steps_sampled_before_learning_starts,
        update_rate=t.update_rate(num_envs),
        iteration_env_steps=iteration_env_steps,
        checkpoint_replay=spec.checkpoint.replay,
        epsilon={"timesteps": t.epsilon_timesteps, "final": t.final_epsilon} if dqn else None,
        target_sync=TargetSync(t.target_network_update_freq, DQN_TAU) if dqn else None,
    )


def learner_settings(spec: ExperimentSpec, *, facts: RunFacts) -> OffPolicyLearnerSettings:
    t = _training(spec)
    common = {"batch_size": t.train_batch_size, "seed": facts.seeds.off_policy_update()}
    if isinstance(t, DQNTraining):
        dqn = DQNSettings(gamma=t.gamma, lr=t.lr, grad_clip=t.grad_clip, double_q=t.double_q)
        return OffPolicyLearnerSettings(**common, dqn=dqn)
    sac = SACSettings(
        gamma=t.gamma,
        tau=t.tau,
        actor_lr=t.actor_lr,
        critic_lr=t.critic_lr,
        alpha_lr=t.alpha_lr,
        grad_clip=t.grad_clip,
        critic_loss=t.critic_loss,
    )
    return OffPolicyLearnerSettings(**common, sac=sac)
