"""The spec's sections other than `training`: env, model, resources, stop, checkpoint, logging."""

import difflib
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from rl_platform.envs.env_info import EnvFacts, check_env, env_facts
from rl_platform.envs.env_kwargs import unknown_env_kwargs
from rl_platform.envs.hidden_view import HiddenView, hidden_view
from rl_platform.envs.sources import EnvIdError, resolve_env_source
from rl_platform.spec.base import NonNegativeInt, PositiveInt, SpecModel
from rl_platform.spec.evaluation import check_eval_stop_key
from rl_platform.utils.storage_uri import check_storage_uri

# Ray's own resource names: RLlib takes CPUs and GPUs from their own keys and refuses them here.
RAY_BUILTIN_RESOURCES = frozenset({"CPU", "GPU", "memory", "object_store_memory"})


def _custom_resource_names(resources: dict[str, float]) -> dict[str, float]:
    builtin = sorted(set(resources) & RAY_BUILTIN_RESOURCES)
    if builtin:
        raise ValueError(
            f"{builtin[0]!r} is one of Ray's own resources; set it with cpus_per_env_runner / "
            "gpus_per_learner, and name only custom resources (e.g. rlp_env_runner) here"
        )
    return resources


LearnerDevice = Literal["auto", "cpu", "cuda", "mps"]

CustomResources = Annotated[
    dict[str, Annotated[float, Field(gt=0.0)]], AfterValidator(_custom_resource_names)
]


class EnvSpec(SpecModel):
    """Which environment to run and how many copies each env runner steps."""

    id: str
    """An rl_platform id (rlp/Duel-v0), a Gymnasium id (CartPole-v1, ALE/Pong-v5, or
    `module:EnvName-v0`, which imports the module that registers it), an entry point
    `package.module:ClassOrFactory` (a gymnasium.Env, RLlib MultiAgentEnv, PettingZoo env or
    VectorGame), or a PettingZoo env's module path (pettingzoo.classic.tictactoe_v3).
    docs/envs.md."""
    kwargs: dict[str, Any] = {}
    """Keyword arguments for the env constructor (`gymnasium.make(id, **kwargs)`)."""
    envs_per_runner: PositiveInt = 1
    """Vectorized copies of the env per env runner."""
    wrappers: list[Literal["atari", "normalize_obs", "flatten_obs"]] = []
    """Preprocessing: `atari` = RLlib's Atari stack (64x64 grey, noop reset, frame skip 4 with
    max-pooling, episodic life, fire reset, 4-frame stack; rl_platform/env_adapters/registry.py)."""
    observation_filter: Literal["none", "mean_std"] = "none"
    """`mean_std`: RLlib's MeanStdFilter connector on every env runner (running mean and
    standard deviation of each observation feature, output clipped to [-10, 10], statistics
    merged across runners after each iteration and saved in checkpoints), as CleanRL's and
    SB3's MuJoCo PPO normalise observations. RLlib's runner only; `rlp eval` and evaluation
    during training filter with the statistics of the checkpoint they load (docs/envs.md)."""
    hide: list[str] = []
    """Observation features blanked (set to 0) in what the learned policies see, in training,
    evaluation and `rlp eval`; the game and its scripted players keep the full frame. Names
    are the env's (the duel's `Obs` features in lower case, both halves: `[hp, shield,
    stocks]`). docs/duel.md, "The learner's view"."""
    vectorize_mode: Literal["sync", "async"] = "sync"
    """gymnasium vector mode per runner; `async` runs each copy in its own process."""
    runner: Literal["auto", "vector", "rllib"] = "auto"
    """Env runner: `vector` = rl_platform's array runner for games with a vectorized core
    (docs/vector_games.md; `envs_per_runner` games per runner, one forward pass per module
    and step); `rllib` = RLlib's stock runner; `auto` = `vector` where the env and model
    allow it, else `rllib`."""

    @field_validator("id")
    @classmethod
    def _known_env(cls, env_id: str) -> str:
        try:
            resolve_env_source(env_id)
        except EnvIdError as err:
            raise ValueError(str(err)) from None
        return env_id

    @field_validator("kwargs")
    @classmethod
    def _kwargs_known(cls, kwargs: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        # The env would raise on them only when an env runner builds it, with a traceback.
        env_id = info.data.get("id")
        unknown, accepted = unknown_env_kwargs(env_id, kwargs) if env_id else ([], [])
        if unknown:
            close = difflib.get_close_matches(unknown[0], accepted, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"it reads {', '.join(accepted)}"
            raise ValueError(f"{env_id} does not read {unknown[0]!r}; {hint}")
        return kwargs

    def facts(self) -> EnvFacts:
        """What this env is (kind, vectorized core), resolved once per process
        (`rl_platform.envs.env_info.env_facts`)."""
        return env_facts(self.id, self.kwargs)

    @field_validator("hide")
    @classmethod
    def _hide_known(cls, features: list[str], info: ValidationInfo) -> list[str]:
        env_id = info.data.get("id")
        if env_id:
            hidden_view(env_id, features)  # ValueError names the feature and a close name
        return features

    def hidden_view(self) -> HiddenView | None:
        """What the learned policies see: the features `hide` blanks (None: the full frame)."""
        return hidden_view(self.id, self.hide)

    @model_validator(mode="after")
    def _user_env_builds(self) -> "EnvSpec":
        # A user's env is built once here, so a wrong return type or an unusable space is a
        # spec error now rather than a traceback inside an env runner later.
        try:
            check_env(self.id, self.kwargs)
        except EnvIdError as err:
            raise ValueError(f"env.id {self.id!r}: {err}") from None
        return self


class ResourcesSpec(SpecModel):
    """Where things run. A budget section: profiles may override it."""

    env_runners: NonNegativeInt = 0
    """Remote env-runner actors; 0 samples in the driver process (fastest on small machines)."""
    learners: NonNegativeInt = 0
    """Remote learner actors; 0 trains in the driver process."""
    gpus_per_learner: Annotated[float, Field(ge=0.0)] = 0.0
    """GPUs per learner (fractions allowed), read with `device` (`learner_gpu_request`). With
    learners=0, >0 puts the local learner on GPU if this machine has one. A remote learner
    (learners>0) asks Ray for them wherever the driver runs; on a node without CUDA it trains
    on CPU (logged). A search trial or a seed reserves what its learner asks for."""
    device: LearnerDevice = "auto"
    """Learner device. `auto`: CUDA, then MPS, then CPU on this machine for the local learner;
    `gpus_per_learner` for remote ones. `cpu` asks for no GPU, `cuda` for `gpus_per_learner`,
    or 1 GPU where that is 0."""
    cpus_per_env_runner: Annotated[float, Field(gt=0.0)] = 1.0
    """CPUs reserved per remote env runner."""
    custom_resources_per_env_runner: CustomResources = {}
    """Ray custom resources each remote env runner asks for, e.g. `{rlp_env_runner: 1}`: env
    runners then start only on node types that declare it (cluster/*.yaml: `cpu_env_runner`).
    A Ray without such a node (a local one) never starts them. docs/cluster.md."""
    custom_resources_per_learner: CustomResources = {}
    """Ray custom resources each remote learner asks for, e.g. `{rlp_learner: 1}` (the
    `gpu_learner` node type of cluster/*.yaml). docs/cluster.md."""
    acting_device: Literal["cpu", "cuda"] = "cpu"
    """Where the array runner's torch modules act and keep the seats' recurrent states
    (`env.runner: vector`). `cuda`: on this machine's GPU, in the driver's env runner
    (`env_runners: 0`), each module's step replayed as a CUDA graph (`cuda_graphs`); a
    machine without CUDA is an error, not a silent fallback (docs/vector_games.md)."""
    cuda_graphs: bool = True
    """With `acting_device: cuda`, capture each module's acting step as a CUDA graph (false:
    launch its kernels one by one, e.g. to compare)."""
    overlap: bool = False
    """The array runner acts on the next training batch while the learner updates on this
    one (a worker thread in each env runner): acting's time hides behind learning's, with
    one policy version of lag (docs/vector_games.md, "Overlap"). Off: every batch is played
    by the weights the learner has just written."""
    sample_timeout_s: Annotated[float, Field(gt=0.0)] = 60.0
    """How long an iteration waits for a remote env runner's samples (RLlib's
    `sample_timeout_s`). A runner still silent then, and deaf to a ping for 10 s more, is
    frozen: it is killed so that Ray restarts it, and the iteration is trained again
    (docs/reliability.md, section 11). Raise it for envs whose `train_batch_size` steps take
    longer to sample."""
    torch_threads: PositiveInt | None = None
    """Torch intra-op threads in the driver (local sampling and learning); None: torch's default.
    1 is fastest for small MLP/LSTM models, whose ops are too small to split across cores."""

    def learner_gpu_request(self, *, resolved_device: LearnerDevice | None = None) -> float:
        """GPUs one learner asks for: the one rule behind the learner's `num_gpus_per_learner`
        (learners/device.py), every reservation of a search trial or a seed
        (search/budget.py) and the cluster fit (capacity/fit.py). `device` is read as an
        explicit choice: `cpu`, `mps` ask for none (RLlib 2.60 learners run on CUDA or CPU),
        `cuda` for `gpus_per_learner`, or 1 where that is 0; `auto` for `gpus_per_learner` as
        given (where the learner lands decides; in a Tune trial, what the trial reserved).
        `resolved_device`: the device resolved on this machine, for the local learner."""
        device = resolved_device or self.device
        if device in ("cpu", "mps"):
            return 0.0
        if device == "cuda":
            return self.gpus_per_learner or 1.0
        return self.gpus_per_learner


class StopSpec(SpecModel):
    """Stop at the first condition reached. A budget section: profiles may override it."""

    env_steps: PositiveInt | None = None
    """Total env steps sampled."""
    iterations: PositiveInt | None = None
    """Training iterations."""
    return_mean: float | None = None
    """Mean return over the last 100 episodes."""
    minutes: Annotated[float, Field(gt=0.0)] | None = None
    """Wall-clock minutes since this (possibly resumed) process started training."""
    eval: dict[Annotated[str, AfterValidator(check_eval_stop_key)], float] | None = None
    """Stop once an evaluation metric reaches a value, e.g. `{greedy/win_rate/based: 0.9}`
    (needs an `evaluation:` block)."""

    @model_validator(mode="after")
    def _at_least_one(self) -> "StopSpec":
        conditions = (self.env_steps, self.iterations, self.return_mean, self.minutes, self.eval)
        if all(v is None for v in conditions):
            raise ValueError(
                "set at least one of env_steps, iterations, return_mean, minutes, eval"
            )
        return self


class CheckpointSpec(SpecModel):
    """Checkpoint cadence and retention. A budget section: profiles may override it."""

    every_iterations: PositiveInt | None = 10
    """Save every N iterations (None: only by time and at the end)."""
    every_minutes: Annotated[float, Field(gt=0.0)] | None = None
    """Save every M minutes of wall time."""
    every_env_steps: PositiveInt | None = None
    """Save once N env steps have passed since the last checkpoint (or the run's start)."""
    keep_last: PositiveInt = 3
    """Keep the newest K checkpoints; older ones are deleted after a new one is complete."""
    at_end: bool = True
    """Save a final checkpoint when training stops (also on Ctrl+C / SIGTERM)."""
    replay: bool = True
    """Save the replay store with each checkpoint (SAC/DQN on the array learner), so that
    `--resume` continues exactly; false: smaller checkpoints, a resume refills the store."""


class LoggingSpec(SpecModel):
    """Metric sinks. metrics.jsonl is always written."""

    wandb: Literal["off", "offline", "online"] = "offline"
    """Weights & Biases mode; `offline` needs no account (files under the run folder)."""
    project: str = "rl_platform"
    """W&B project."""
    tags: list[str] = []
    """W&B tags."""
    tensorboard: bool = True
    """Write TensorBoard event files under the run folder."""
    storage: Annotated[str, AfterValidator(check_storage_uri)] | None = None
    """Mirror the run folder to `<storage>/<name>/<stamp>/` (`s3://bucket/runs`, `gs://...`,
    `hdfs://...`, `file:///abs/path` or an absolute path on a shared mount) after every
    checkpoint and at the end, with a `manifest.json` of sha256s written last; `rlp pull`
    brings it back. The run still writes its local folder first. docs/cluster.md."""


class HealthSpec(SpecModel):
    """Training health checks; on by default (defaults from the reference self-play trainer)."""

    min_entropy: Annotated[float, Field(ge=0.0)] | None = None
    """Entropy floor in nats; None: `min_entropy_fraction` of the action space's maximum."""
    min_entropy_fraction: Annotated[float, Field(ge=0.0, le=1.0)] = 0.02
    """Default floor: this share of the maximum entropy (log n for n discrete actions; no
    default for continuous actions). Below it: `health/entropy_collapse` and `on_collapse`."""
    on_collapse: Literal["warn", "stop"] = "warn"
    """`stop` ends the run at a collapse without saving the collapsed policy: the last healthy
    checkpoint stays `latest`. Search trials always stop (a collapsed trial wastes budget)."""
    max_approx_kl: Annotated[float, Field(gt=0.0)] | None = 0.06
    """Warn and log `health/approx_kl_high` when an update's approx KL exceeds this."""
    max_clip_frac: Annotated[float, Field(gt=0.0, le=1.0)] | None = 0.30
    """Warn and log `health/clip_frac_high` when PPO clips more than this share of samples for
    `clip_frac_iterations` iterations in a row."""
    clip_frac_iterations: PositiveInt = 2
    """How many iterations in a row `train/clip_frac` must exceed `max_clip_frac`. RLlib's PPO
    learner reports one minibatch's fraction (the update's last), which healthy CartPole runs
    pushed past 0.3 for single iterations, never two in a row (docs/training.md, "Health")."""
    zero_reward_iterations: PositiveInt | None = 20
    """Warn and log `health/reward_zero/<component>` when a reward component stays exactly 0
    for this many iterations in a row (a dead term: a weight of 0, a broken env signal)."""
    stop_on_nan: bool = True
    """Stop when a loss or weight is NaN/Inf; the last good checkpoint stays `latest`."""
