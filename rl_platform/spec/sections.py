"""The spec's sections other than `training`: env, model, resources, stop, checkpoint, logging."""

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from rl_platform.envs.catalog import close_env_ids, is_known_env
from rl_platform.spec.base import SpecModel

PositiveInt = Annotated[int, Field(gt=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]


class EnvSpec(SpecModel):
    """Which environment to run and how many copies each env runner steps."""

    id: str
    """Gymnasium id (CartPole-v1, ALE/Pong-v5, Hopper-v5) or an rl_platform id (rlp/Duel-v0)."""
    kwargs: dict[str, Any] = {}
    """Keyword arguments for the env constructor (`gymnasium.make(id, **kwargs)`)."""
    envs_per_runner: PositiveInt = 1
    """Vectorized copies of the env per env runner."""
    wrappers: list[Literal["atari", "normalize_obs", "flatten_obs"]] = []
    """Preprocessing: `atari` = RLlib's Atari stack (84x84 grey, frame skip, 4-frame stack)."""
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
        if not is_known_env(env_id):
            close = close_env_ids(env_id)
            hint = f"did you mean {', '.join(close)}?" if close else "`rlp envs` lists known ids"
            raise ValueError(f"unknown env id; {hint}")
        return env_id


class _ModuleModelSpec(SpecModel):
    """Shared by the model specs: the keys handed to the RLModule as its `model_config`."""

    @property
    def settings(self) -> dict[str, Any]:
        """This model's keys minus `type`: the RLModule's `model_config`."""
        return self.model_dump(mode="json", exclude={"type"})


class MLPModelSpec(_ModuleModelSpec):
    """RLlib's default catalog network (an MLP, or a CNN under the `atari` wrapper); our masked
    MLP with the same keys for envs with action masks (docs/modules.md)."""

    type: Literal["default", "mlp"] = "default"
    """`default`/`mlp`: RLlib's catalog MLP; rl_platform's masked MLP on action-mask envs."""
    hidden: list[PositiveInt] = [256, 256]
    """Hidden layer sizes."""
    activation: Literal["tanh", "relu", "silu"] = "tanh"
    """Hidden activation."""
    vf_share_layers: bool = False
    """Share the trunk between policy and value function."""


class LSTMModelSpec(_ModuleModelSpec):
    """rl_platform's LSTM actor-critic (docs/modules.md)."""

    type: Literal["lstm"]
    encoder: list[PositiveInt] = [256]
    """MLP encoder before the LSTM."""
    lstm_cell_size: PositiveInt = 512
    """LSTM hidden size."""
    actor: list[PositiveInt] = [96, 96]
    """Policy head hidden sizes."""
    critic: list[PositiveInt] = [96, 96]
    """Value head hidden sizes."""
    max_seq_len: PositiveInt = 32
    """Training sequence chunk length."""
    activation: Literal["relu", "tanh", "silu", "gelu", "elu"] = "relu"
    """Hidden activation."""


class TransformerLSTMModelSpec(_ModuleModelSpec):
    """Transformer opponent-history encoder feeding an LSTM actor-critic (docs/modules.md)."""

    type: Literal["transformer_lstm"]
    history: PositiveInt = 90
    """Opponent frames kept by the history connector."""
    layers: PositiveInt = 6
    """Pre-norm transformer layers of the strategy encoder."""
    heads: PositiveInt = 8
    """Attention heads (must divide d_model)."""
    kv_heads: PositiveInt | None = None
    """Key/value heads shared by the query heads (grouped-query attention; must divide
    `heads`). Unset: 2 (1 for an odd `heads`); equal to `heads`: plain multi-head attention."""
    d_model: PositiveInt = 256
    """Transformer width and strategy-latent size."""
    lstm_cell_size: PositiveInt = 512
    """LSTM hidden size."""
    actor: list[PositiveInt] = [96, 96]
    """Policy head hidden sizes."""
    critic: list[PositiveInt] = [96, 96]
    """Value head hidden sizes."""
    obs_encoder: list[PositiveInt] = [256]
    """MLP from the agent's own observation to d_model."""
    ffn_mult: PositiveInt = 1
    """Feed-forward width as a multiple of d_model."""
    precision: Literal["fp32", "bf16"] = "fp32"
    """bf16 autocast on CUDA when `bf16`."""
    max_seq_len: PositiveInt = 32
    """Training sequence chunk length."""
    activation: Literal["relu", "tanh", "silu", "gelu", "elu"] = "relu"
    """Hidden activation."""
    obs_split: dict[str, Any]
    """Own/opponent parts of the observation: `{self: [0, 32], opponent: [32, 64]}` or dict keys."""

    @model_validator(mode="after")
    def _heads_divide_width(self) -> "TransformerLSTMModelSpec":
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by heads ({self.heads})")
        if self.kv_heads is not None and self.heads % self.kv_heads:
            raise ValueError(
                f"heads ({self.heads}) must be a multiple of kv_heads ({self.kv_heads})"
            )
        return self


def _model_tag(value: Any) -> str:
    """Which model spec applies; a missing `type` means RLlib's default MLP."""
    kind = value.get("type", "default") if isinstance(value, dict) else value.type
    return "mlp" if kind in ("default", "mlp") else str(kind)


ModelSpec = Annotated[
    Annotated[MLPModelSpec, Tag("mlp")]
    | Annotated[LSTMModelSpec, Tag("lstm")]
    | Annotated[TransformerLSTMModelSpec, Tag("transformer_lstm")],
    Discriminator(_model_tag),
]
MODEL_TYPES = {"default": MLPModelSpec, "mlp": MLPModelSpec, "lstm": LSTMModelSpec}
MODEL_TYPES |= {"transformer_lstm": TransformerLSTMModelSpec}


class ResourcesSpec(SpecModel):
    """Where things run. A budget section: profiles may override it."""

    env_runners: NonNegativeInt = 0
    """Remote env-runner actors; 0 samples in the driver process (fastest on small machines)."""
    learners: NonNegativeInt = 0
    """Remote learner actors; 0 trains in the driver process."""
    gpus_per_learner: Annotated[float, Field(ge=0.0)] = 0.0
    """GPUs per learner (fractions allowed). With learners=0, >0 puts the local learner on GPU."""
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    """Learner device. `auto` picks CUDA, then MPS, then CPU."""
    cpus_per_env_runner: Annotated[float, Field(gt=0.0)] = 1.0
    """CPUs reserved per remote env runner."""
    torch_threads: PositiveInt | None = None
    """Torch intra-op threads in the driver (local sampling and learning); None: torch's default.
    1 is fastest for small MLP/LSTM models, whose ops are too small to split across cores."""


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

    @model_validator(mode="after")
    def _at_least_one(self) -> "StopSpec":
        if all(
            v is None for v in (self.env_steps, self.iterations, self.return_mean, self.minutes)
        ):
            raise ValueError("set at least one of env_steps, iterations, return_mean, minutes")
        return self


class CheckpointSpec(SpecModel):
    """Checkpoint cadence and retention. A budget section: profiles may override it."""

    every_iterations: PositiveInt | None = 10
    """Save every N iterations (None: only by time and at the end)."""
    every_minutes: Annotated[float, Field(gt=0.0)] | None = None
    """Save every M minutes of wall time."""
    keep_last: PositiveInt = 3
    """Keep the newest K checkpoints; older ones are deleted after a new one is complete."""
    at_end: bool = True
    """Save a final checkpoint when training stops (also on Ctrl+C / SIGTERM)."""


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


class HealthSpec(SpecModel):
    """Training health checks."""

    min_entropy: Annotated[float, Field(ge=0.0)] | None = None
    """Warn and log `health/entropy_collapse` when policy entropy falls below this."""
    stop_on_nan: bool = True
    """Stop when a loss or weight is NaN/Inf; the last good checkpoint stays `latest`."""
