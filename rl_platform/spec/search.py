"""The `search:` block of an experiment spec: what to vary, how to sample it, when to stop trials.

Pure pydantic (no Ray), like the other sections' schemas (`spec/league.py`, `spec/bc.py`).
Which dotted paths `params` may name depends on the whole experiment schema, so
`rl_platform.spec.experiment` checks them (`ExperimentSearchSpec`).
"""

import difflib
import math
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_serializer,
    model_validator,
)

from rl_platform.spec.base import Integer, PositiveInt

DistributionKind = Literal["uniform", "loguniform", "quniform", "randint", "choice", "grid"]
KINDS: tuple[str, ...] = get_args(DistributionKind)
SHORTHAND_SEPARATOR = "__"  # SLM-Lab style: `training.lr__loguniform: [1e-4, 1e-3]`


class _SearchModel(BaseModel):
    # SpecModel's settings, spelled out (as `spec/bc.py` and `spec/league.py` do).
    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        populate_by_name=True,
        allow_inf_nan=False,
    )


def _is_number(value: Any) -> bool:
    # bool is an int subclass; `true` in a range is always a mistake
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_range(kind: str, args: list[Any], *, size: int, ints: bool = False) -> None:
    example = {"uniform": "[0.9, 0.99]", "loguniform": "[1e-4, 1e-2]", "randint": "[1, 10]"}
    example |= {"quniform": "[0.0, 0.02, 0.005]"}
    names = "[low, high, q]" if size == 3 else "[low, high]"
    ok = len(args) == size and all(_is_number(a) for a in args)
    if ints:
        ok = ok and all(isinstance(a, int) for a in args)
    if not ok or args[0] >= args[1]:
        kind_of = "integers" if ints else "numbers"
        raise ValueError(
            f"{kind} takes {names} ({kind_of}, low < high), e.g. {{{kind}: {example[kind]}}}"
        )


def _check_args(kind: str, args: list[Any]) -> None:
    if kind in ("uniform", "loguniform"):
        _check_range(kind, args, size=2)
        if kind == "loguniform" and args[0] <= 0:
            raise ValueError("loguniform needs 0 < low < high (it samples the logarithm)")
    elif kind == "quniform":
        _check_range(kind, args, size=3)
        if args[2] <= 0:
            raise ValueError("quniform's step q must be > 0")
    elif kind == "randint":
        _check_range(kind, args, size=2, ints=True)
    elif not args:
        raise ValueError(f"{kind} needs a non-empty list of values")


class Distribution(_SearchModel):
    """One searched value, written `{kind: args}` in the file, e.g. `{loguniform: [1e-4, 1e-3]}`.

    `uniform`/`loguniform: [low, high]`, `quniform: [low, high, q]` (multiples of q),
    `randint: [low, high]` (integers, high excluded, as in Tune), `choice: [values]` (sampled),
    `grid: [values]` (every value, times `num_samples`).
    """

    kind: DistributionKind
    """The distribution."""
    args: list[Any]
    """Its arguments (bounds or values)."""

    @model_validator(mode="before")
    @classmethod
    def _from_mapping(cls, data: Any) -> Any:
        if isinstance(data, list):
            raise ValueError(
                "a bare list is ambiguous: write {choice: [...]} or {grid: [...]}, or use the "
                "shorthand key `path__kind`"
            )
        if not isinstance(data, dict) or set(data) == {"kind", "args"}:
            return data
        if len(data) != 1:
            raise ValueError(
                "write one distribution as {kind: args}, e.g. {loguniform: [1e-4, 1e-3]}; "
                f"kinds: {', '.join(KINDS)}"
            )
        ((kind, args),) = data.items()
        if kind not in KINDS:
            close = difflib.get_close_matches(str(kind), KINDS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"kinds: {', '.join(KINDS)}"
            raise ValueError(f"unknown distribution {kind!r}; {hint}")
        if not isinstance(args, list):
            raise ValueError(f"{kind} takes a list, got {args!r}")
        return {"kind": kind, "args": args}

    @model_validator(mode="after")
    def _valid_args(self) -> "Distribution":
        _check_args(self.kind, self.args)
        return self

    @model_serializer
    def _as_mapping(self) -> dict[str, Any]:
        # the file format, so a dumped spec validates again
        return {self.kind: list(self.args)}


class SchedulerSpec(_SearchModel):
    """Trial scheduling. `asha` and `halving` stop poor trials at rungs; `fifo` runs every
    trial to `max_t`."""

    type: Literal["asha", "halving", "fifo"] = "asha"
    """`asha`: Tune's asynchronous successive halving (a trial is judged against the results
    that happen to be recorded at its rung). `halving`: synchronous successive halving (every
    trial pauses at each rung until the whole cohort has reported there, then the best
    ceil(n / reduction_factor) go on; docs/search.md). `fifo`: no early stopping."""
    metric: str = "train/episode_return_mean"
    """The reported metric trials are compared on (any key of metrics.jsonl)."""
    mode: Literal["max", "min"] = "max"
    """Whether a higher or a lower `metric` is better."""
    time_attr: Literal["env_steps", "training_iteration", "time_total_s"] = "env_steps"
    """The budget axis of `max_t` and `grace_period`."""
    max_t: PositiveInt | None = None
    """Budget per trial in `time_attr` units. None: from `stop` (env_steps, iterations, minutes)."""
    grace_period: PositiveInt | None = None
    """Budget before a trial can be stopped (the first rung). None: max_t / reduction_factor²."""
    reduction_factor: Annotated[float, Field(gt=1.0)] = 3.0
    """Rung spacing; about 1/reduction_factor of the trials go on at each rung."""

    @model_validator(mode="after")
    def _grace_within_budget(self) -> "SchedulerSpec":
        if self.max_t and self.grace_period and self.grace_period > self.max_t:
            raise ValueError(f"grace_period {self.grace_period} is larger than max_t {self.max_t}")
        return self

    @model_validator(mode="after")
    def _halving_axis_is_counted(self) -> "SchedulerSpec":
        # A paused trial resumes from the checkpoint it reported where it crossed its rung; a
        # trial counts its env steps and iterations, but Tune's wall clock is Tune's own.
        if self.type == "halving" and self.time_attr == "time_total_s":
            raise ValueError(
                "time_attr: time_total_s cannot be used with type halving (each trial "
                "checkpoints where it crosses a rung, and it cannot see where Tune's wall clock "
                "crosses one); use time_attr env_steps or training_iteration, or type asha"
            )
        return self


class SearcherSpec(_SearchModel):
    """How configurations are proposed. `searcher: optuna` is short for `{type: optuna}`."""

    type: Literal["random", "optuna"] = "random"
    """`random` (Tune's variant generator, supports `grid`) or `optuna` (TPE; extra `optuna`)."""
    seed: Integer | None = None
    """Seed of the sampler, for a reproducible sequence of configurations."""


class TrialResourcesSpec(_SearchModel):
    """Resources of one trial's driver process (remote env runners and learners add their own)."""

    cpu: Annotated[float, Field(gt=0.0)] = 1.0
    """CPUs per trial."""
    gpu: Annotated[float, Field(ge=0.0)] = 0.0
    """GPUs per trial; fractions share one GPU between trials (0.25: four per GPU)."""


class SearchSpec(_SearchModel):
    """A hyperparameter search over this spec (`rlp search`); `rlp train` ignores the block."""

    params: dict[str, Distribution] = Field(min_length=1)
    """Dotted spec path -> distribution, e.g. `training.lr: {loguniform: [1e-4, 1e-3]}`. The
    experiment spec checks each path against its schema (`ExperimentSearchSpec`)."""
    num_samples: PositiveInt = 8
    """Trials to sample (with `grid`: repetitions of the whole grid)."""
    scheduler: SchedulerSpec = SchedulerSpec()
    """Early stopping of trials and the metric they are ranked on."""
    searcher: SearcherSpec = SearcherSpec()
    """How configurations are proposed."""
    resources: TrialResourcesSpec = TrialResourcesSpec()
    """Per-trial resources."""
    max_concurrent: PositiveInt | None = None
    """At most this many trials at once. None: as many as the resources allow. Must be None
    with `scheduler.type: halving` (set `resources.cpu` instead)."""

    @field_validator("params", mode="before")
    @classmethod
    def _expand_shorthand(cls, params: Any) -> Any:
        """`training.lr__loguniform: [a, b]` -> `training.lr: {loguniform: [a, b]}`."""
        if not isinstance(params, dict):
            return params
        expanded: dict[Any, Any] = {}
        for key, value in params.items():
            path, sep, kind = str(key).rpartition(SHORTHAND_SEPARATOR)
            if sep and kind in KINDS:
                key, value = path, {kind: value}
            if key in expanded:
                raise ValueError(f"{key!r} is given twice (once in shorthand form)")
            expanded[key] = value
        return expanded

    @field_validator("searcher", mode="before")
    @classmethod
    def _searcher_shorthand(cls, value: Any) -> Any:
        return {"type": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _halving_runs_the_whole_cohort(self) -> "SearchSpec":
        # Tune's searchers count a paused trial as running: with a cap, the first trials would
        # pause at the first rung, no further trial would be created, and the rung would wait
        # for them forever.
        if self.scheduler.type == "halving" and self.max_concurrent is not None:
            raise ValueError(
                f"max_concurrent: {self.max_concurrent} cannot be used with scheduler.type "
                "halving (paused trials count against the cap, so the rest of the cohort would "
                "never start); remove it and let the resources decide how many trials run at "
                "once (resources.cpu per trial), or use scheduler.type asha"
            )
        return self

    @model_validator(mode="after")
    def _searcher_supports_space(self) -> "SearchSpec":
        if self.searcher.type != "optuna":
            return self
        for path, dist in self.params.items():
            if dist.kind == "grid":
                raise ValueError(f"{path}: optuna cannot search a grid; use choice or random")
            plain = (str, int, float, bool, type(None))
            if dist.kind == "choice" and not all(isinstance(v, plain) for v in dist.args):
                raise ValueError(
                    f"{path}: optuna's choices must be scalars (numbers, strings, booleans); "
                    "use the random searcher for lists or mappings"
                )
        return self
