"""Algorithm hyperparameters (`training:`), one model per algorithm family.

The spec's `algo` selects the model; its fields map one to one onto RLlib's
`AlgorithmConfig.training(...)` arguments in `rl_platform.rllib.config`.
"""

from itertools import pairwise
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from rl_platform.spec.base import Integer, NonNegativeInt, PositiveInt, SpecModel

Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
# [[env steps, learning rate], ...]; a later point may be 0 (annealed to nothing, as CleanRL's
# `anneal_lr`), the first may not (the run would never learn).
LRSchedule = list[tuple[NonNegativeInt, Annotated[float, Field(ge=0.0, le=1.0)]]]


class AutoScaleSpec(SpecModel):
    """Targets for `training.auto_scale` (see docs/batch_scaling.md for the rule)."""

    target_minibatch: PositiveInt = 8192
    """Keep the minibatch near this size for large batches."""
    target_grad_steps: PositiveInt = 16
    """Aim for about this many gradient steps per training iteration."""
    min_epochs: PositiveInt = 2
    """Never fewer passes over each batch than this."""


class CommonTraining(SpecModel):
    """Hyperparameters every algorithm shares."""

    lr: Annotated[float, Field(gt=0.0, le=1.0)] = 3e-4
    """Learning rate of the (first) optimizer."""
    gamma: Fraction = 0.99
    """Discount factor."""
    train_batch_size: PositiveInt = 4000
    """Env steps per learner per training iteration (RLlib's train_batch_size_per_learner)."""
    grad_clip: Annotated[float, Field(gt=0.0)] | None = None
    """Global-norm gradient clip; None disables clipping."""


class PPOTraining(CommonTraining):
    """PPO, APPO and IMPALA hyperparameters (all on-policy with a value function)."""

    algo: Literal["PPO", "APPO", "IMPALA"] = "PPO"
    minibatch_size: PositiveInt = 128
    """SGD minibatch size."""
    num_epochs: Annotated[Integer, Field(gt=0, le=1000)] = 10
    """Passes over each train batch (at most 1000: PPO uses 1-30; more only overfits the
    batch, and a mistyped 1e9 would run for days per iteration)."""
    lambda_: Fraction = Field(default=0.95, alias="lambda")
    """GAE lambda (PPO) / v-trace lambda (APPO, IMPALA)."""
    clip_param: Annotated[float, Field(gt=0.0, le=1.0)] = 0.2
    """PPO surrogate clip epsilon."""
    vf_clip_param: Annotated[float, Field(gt=0.0)] | None = 10.0
    """Clip for the value-function loss (RLlib clamps each sample's squared error at it);
    None: no clip (SB3's `clip_range_vf: None`)."""
    vf_loss_coeff: Annotated[float, Field(ge=0.0)] = 0.5
    """Weight of the value-function loss."""
    entropy_coeff: Annotated[float, Field(ge=0.0)] = 0.0
    """Weight of the entropy bonus."""
    use_kl_loss: bool = False
    """Add RLlib's adaptive KL penalty."""
    kl_coeff: Annotated[float, Field(ge=0.0)] = 0.2
    """Initial KL coefficient when use_kl_loss is on."""
    normalize_rewards: bool = False
    """Divide each reward by the running standard deviation of the discounted return and clip
    it to [-10, 10] (gymnasium's NormalizeReward, as CleanRL's and SB3's MuJoCo PPO do), on
    the learner's copy of the episodes: the returns RLlib reports stay the env's. PPO on
    RLlib's learner only (rl_platform/connectors/scale_rewards.py)."""
    lr_schedule: LRSchedule | None = None
    """Learning rate by env steps sampled, `[[0, 3e-4], [3000000, 3e-5]]`: linear between the
    points, held after the last; the first point is at 0. Replaces `lr`."""
    auto_scale: bool = False
    """Pick minibatch size, epochs and LR from the batch size (see docs/batch_scaling.md)."""
    auto_scale_targets: AutoScaleSpec = AutoScaleSpec()
    """Targets used when auto_scale is on."""
    learner: Literal["auto", "array", "rllib"] = "auto"
    """How PPO learns from the array runner's samples: `array` keeps them as the runner wrote
    them, fixed-shape tensors updated without host reads (docs/vector_games.md, "The array
    learner"); `rllib` builds episodes for RLlib's learner connectors; `auto`: array wherever
    it can serve the spec (rl_platform/spec/learner_choice.py says where it cannot)."""

    @field_validator("lr_schedule")
    @classmethod
    def _lr_schedule_is_ordered(cls, points: LRSchedule | None) -> LRSchedule | None:
        if points is None:
            return None
        steps = [step for step, _ in points]
        if not points or steps[0] != 0:
            raise ValueError(
                f"must start at 0 env steps, got {steps[:1]}: e.g. [[0, 3e-4], [3000000, 3e-5]]"
            )
        if any(later <= earlier for earlier, later in pairwise(steps)):
            raise ValueError(f"env steps must increase, got {steps}")
        if points[0][1] == 0.0:
            raise ValueError("the learning rate at 0 env steps must be above 0")
        return points

    @model_validator(mode="after")
    def _one_learning_rate_rule(self) -> "PPOTraining":
        if self.lr_schedule is not None and self.auto_scale:
            raise ValueError("lr_schedule and auto_scale both set the learning rate: pick one")
        return self

    @model_validator(mode="after")
    def _rewards_scaled_by_ppo(self) -> "PPOTraining":
        if self.normalize_rewards and self.algo != "PPO":
            raise ValueError(f"normalize_rewards is a PPO setting; {self.algo} does not read it")
        return self

    @model_validator(mode="after")
    def _minibatch_fits_batch(self) -> "PPOTraining":
        # RLlib refuses this only when the algorithm is built, with a traceback.
        if not self.auto_scale and self.minibatch_size > self.train_batch_size:
            raise ValueError(
                f"minibatch_size ({self.minibatch_size}) is larger than train_batch_size "
                f"({self.train_batch_size}); lower minibatch_size or raise train_batch_size"
            )
        return self


class DQNTraining(CommonTraining):
    """DQN (double, dueling, n-step) hyperparameters."""

    algo: Literal["DQN"] = "DQN"
    train_batch_size: PositiveInt = 32
    """Replay minibatch size per learner."""
    replay_capacity: PositiveInt = 50_000
    """Replay buffer capacity in env steps."""
    replay: Literal["prioritized", "uniform"] = "prioritized"
    """How the replay buffer samples: by TD error (Rainbow's prioritized replay, RLlib's
    default for DQN) or uniformly."""
    target_network_update_freq: PositiveInt = 500
    """Env steps between target-network syncs."""
    num_steps_sampled_before_learning_starts: NonNegativeInt = 1000
    """Warm-up env steps before the first update."""
    double_q: bool = True
    """Use double Q-learning."""
    dueling: bool = True
    """Use a dueling head."""
    n_step: PositiveInt = 1
    """N-step returns."""
    epsilon_timesteps: PositiveInt = 10_000
    """Env steps over which exploration epsilon decays from 1.0 to final_epsilon."""
    final_epsilon: Fraction = 0.02
    """Exploration epsilon after the decay."""
    training_intensity: Annotated[float, Field(gt=0.0)] | None = None
    """Replayed / sampled step ratio; None uses RLlib's natural value. On the array learner
    it sets `updates_per_env_step` to `training_intensity / train_batch_size`."""
    updates_per_env_step: Annotated[float, Field(gt=0.0)] | None = None
    """Updates per env step sampled (array learner; fractions accumulate, 0.25 = one update
    every 4 env steps). None: from `training_intensity`, else one update per vector step of
    `env.envs_per_runner` env steps (RLlib's natural rate with `n_step: 1`; RLlib's own DQN
    samples `n_step` steps per env before each update, a third as often with n_step 3:
    docs/off_policy.md). Set one of the two."""
    learner: Literal["auto", "array", "rllib"] = "auto"
    """`array`: our fixed-shape replay store and update step (docs/off_policy.md); `rllib`:
    RLlib's own DQN with its episode replay buffer; `auto`: array wherever it can serve the
    spec (rl_platform/spec/learner_choice.py says where it cannot)."""

    @model_validator(mode="after")
    def _one_update_rate(self) -> "DQNTraining":
        if self.training_intensity is not None and self.updates_per_env_step is not None:
            raise ValueError(
                "training_intensity and updates_per_env_step both set the update rate: pick one"
            )
        return self

    def update_rate(self, envs_per_runner: int) -> float:
        """Updates per env step on the array learner (`updates_per_env_step`'s rule)."""
        if self.updates_per_env_step is not None:
            return self.updates_per_env_step
        if self.training_intensity is not None:
            return self.training_intensity / self.train_batch_size
        return 1.0 / envs_per_runner


class SACTraining(CommonTraining):
    """SAC hyperparameters."""

    algo: Literal["SAC"] = "SAC"
    train_batch_size: PositiveInt = 256
    """Replay minibatch size per learner."""
    actor_lr: Annotated[float, Field(gt=0.0, le=1.0)] = 3e-4
    """Actor learning rate."""
    critic_lr: Annotated[float, Field(gt=0.0, le=1.0)] = 3e-4
    """Critic learning rate."""
    alpha_lr: Annotated[float, Field(gt=0.0, le=1.0)] = 3e-4
    """Entropy-temperature learning rate."""
    tau: Annotated[float, Field(gt=0.0, le=1.0)] = 0.005
    """Polyak factor for target networks."""
    initial_alpha: Annotated[float, Field(gt=0.0)] = 1.0
    """Initial entropy temperature."""
    replay_capacity: PositiveInt = 1_000_000
    """Replay buffer capacity in env steps."""
    replay: Literal["prioritized", "uniform"] = "uniform"
    """How the replay buffer samples: uniformly, as SAC's paper and its published results
    (CleanRL, SB3, Spinning Up) do, or by TD error (RLlib's own SAC default)."""
    num_steps_sampled_before_learning_starts: NonNegativeInt = 1500
    """Warm-up env steps before the first update."""
    n_step: PositiveInt = 1
    """N-step returns."""
    twin_q: bool = True
    """Use clipped double-Q."""
    critic_loss: Literal["mse", "huber"] = "mse"
    """How the critics regress on their target (array learner): the squared error of SAC's
    paper, CleanRL and SB3, or Huber with delta 1, RLlib's SAC (its own path,
    `learner: rllib`, always uses Huber). On Hopper-v5 Huber held Q at 2.7x the squared
    error's estimate by 60k env steps and learned slower (docs/off_policy.md)."""
    updates_per_env_step: Annotated[float, Field(gt=0.0)] = 1.0
    """Updates per env step sampled (array learner; fractions accumulate, 0.5 = one update
    every 2 env steps). 1: SAC's paper, and RLlib's SAC with one env copy."""
    learner: Literal["auto", "array", "rllib"] = "auto"
    """`array`: our fixed-shape replay store and update step (docs/off_policy.md); `rllib`:
    RLlib's own SAC with its episode replay buffer; `auto`: array wherever it can serve the
    spec (rl_platform/spec/learner_choice.py says where it cannot)."""

    def update_rate(self, envs_per_runner: int) -> float:
        """Updates per env step on the array learner."""
        return self.updates_per_env_step


class BCTraining(CommonTraining):
    """Offline behaviour cloning from `rlp record` episodes (docs/bc.md)."""

    algo: Literal["BC"] = "BC"
    dataset: str
    """Folder written by `rlp record` (parquet transitions in RLlib's offline format)."""
    lr: Annotated[float, Field(gt=0.0, le=1.0)] = 1e-3
    """Learning rate."""
    train_batch_size: PositiveInt = 1024
    """Transitions per gradient step."""
    updates_per_iteration: PositiveInt = 20
    """Gradient steps per training iteration (RLlib's dataset_num_iters_per_learner)."""
    eval_episodes: NonNegativeInt = 5
    """Greedy evaluation episodes per iteration (`bc/eval_return_mean`); 0 disables."""


TrainingSpec = Annotated[
    PPOTraining | DQNTraining | SACTraining | BCTraining, Field(discriminator="algo")
]
ALGO_NAMES = ("PPO", "APPO", "IMPALA", "DQN", "SAC", "BC")
