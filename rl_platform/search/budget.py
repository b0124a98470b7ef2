"""What one trial may use: its budget on the scheduler's time axis and its resource bundles
(search trials and `rlp train --seeds` trials: a learner's GPUs are what it asks for,
`ResourcesSpec.learner_gpu_request`).

`max_t` defaults to the spec's own stop condition on that axis, so a profile that shrinks
`stop` (the `smoke` profile) shrinks every trial of the search with it.
"""

from dataclasses import dataclass

from rl_platform.base.errors import SpecError, UserError
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.search import SearchSpec
from rl_platform.spec.search_paths import canonical_param_path, spec_unions

_STOP_FIELD = {
    "env_steps": "env_steps",
    "training_iteration": "iterations",
    "time_total_s": "minutes",
}

# Searchable sections that a spec may leave out: a sample alone would not make a valid block.
_OPTIONAL_SECTIONS = {"league": "league.md", "bc": "bc.md"}


@dataclass(frozen=True)
class TrialBudget:
    """The scheduler's view of one trial."""

    time_attr: str
    max_t: int
    grace_period: int
    reduction_factor: float


def search_of(spec: ExperimentSpec, *, source: str = "spec") -> SearchSpec:
    """The spec's search block, checked against the spec's own algorithm; raises if unusable."""
    if spec.search is None:
        raise UserError(f"{source}: no `search:` block; see docs/search.md for how to write one")
    problems = []
    for path in spec.search.params:
        try:
            canonical_param_path(path, schema=ExperimentSpec, unions=spec_unions(spec))
        except ValueError as exc:
            kinds = f"algo {spec.algo}, model.type {spec.model.type}"
            problems.append(f"search.params.{path}: {exc} (for {kinds})")
        section = path.split(".")[0]
        if section in _OPTIONAL_SECTIONS and getattr(spec, section) is None:
            problems.append(
                f"search.params.{path}: the spec has no `{section}:` block to vary; add one "
                f"(docs/{_OPTIONAL_SECTIONS[section]})"
            )
    if problems:
        raise SpecError(problems, source=source)
    return spec.search


def _max_t_from_stop(spec: ExperimentSpec, time_attr: str) -> int | None:
    value = getattr(spec.stop, _STOP_FIELD[time_attr])
    if value is None:
        return None
    return int(value * 60) if time_attr == "time_total_s" else int(value)


def trial_budget(spec: ExperimentSpec, *, source: str = "spec") -> TrialBudget:
    """The scheduler budget; `max_t` from `stop` and `grace_period` from `max_t` when unset."""
    scheduler = search_of(spec, source=source).scheduler
    max_t = scheduler.max_t or _max_t_from_stop(spec, scheduler.time_attr)
    if max_t is None:
        stop_field = _STOP_FIELD[scheduler.time_attr]
        raise SpecError(
            [
                f"search.scheduler.max_t: not set and stop.{stop_field} is empty; set one of "
                f"them (time_attr is {scheduler.time_attr})"
            ],
            source=source,
        )
    grace = scheduler.grace_period or max(1, int(max_t / scheduler.reduction_factor**2))
    if grace > max_t:
        raise SpecError(
            [f"search.scheduler.grace_period: {grace} is larger than max_t {max_t}"], source=source
        )
    return TrialBudget(
        time_attr=scheduler.time_attr,
        max_t=max_t,
        grace_period=grace,
        reduction_factor=scheduler.reduction_factor,
    )


def trial_bundles(spec: ExperimentSpec) -> list[dict[str, float]]:
    """Placement-group bundles of one search trial: its driver, then its RLlib actors."""
    trial = search_of(spec).resources
    return [driver_bundle(spec, cpu=trial.cpu, gpu=trial.gpu), *actor_bundles(spec)]


def driver_bundle(spec: ExperimentSpec, *, cpu: float, gpu: float = 0.0) -> dict[str, float]:
    """The bundle of a trial's own process: `cpu` and `gpu`, and with `learners: 0` at least
    the GPUs of the learner that trains in it (`ResourcesSpec.learner_gpu_request`): Tune shows
    a trial only the GPUs it reserved, so a learner asking for one in a trial that reserved none
    would train on CPU."""
    res = spec.resources
    if res.learners == 0:
        gpu = max(gpu, res.learner_gpu_request())
    return {"CPU": cpu} | ({"GPU": gpu} if gpu else {})


def actor_bundles(spec: ExperimentSpec) -> list[dict[str, float]]:
    """One bundle per remote env runner and remote learner of a run inside a Tune trial:
    RLlib creates those actors inside the trial, so they must fit in the trial's reservation."""
    res = spec.resources
    runner = {"CPU": res.cpus_per_env_runner} | res.custom_resources_per_env_runner
    gpus = res.learner_gpu_request()
    learner = {"CPU": 1.0} | ({"GPU": gpus} if gpus else {})
    learner |= res.custom_resources_per_learner
    return [dict(runner) for _ in range(res.env_runners)] + [
        dict(learner) for _ in range(res.learners)
    ]
