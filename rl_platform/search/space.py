"""The search space: `search.params` -> Tune sampling objects, and sampled values -> a trial spec.

A sampled configuration is a flat mapping of dotted spec paths to values (`--set` style), so it
reads the same in Tune's config, results.csv and best.yaml.
"""

import copy
from collections.abc import Mapping
from typing import Any

from rl_platform.base.errors import SpecError
from rl_platform.spec import ExperimentSpec, validate_spec_data
from rl_platform.spec.search import Distribution


def to_tune_domain(dist: Distribution) -> Any:
    """One distribution as a Tune sampling object (`grid` as Tune's `{"grid_search": [...]}`)."""
    # Imported here so that the spec model (and `rlp validate`) never imports Ray.
    from ray import tune

    args = list(dist.args)
    match dist.kind:
        case "uniform":
            return tune.uniform(float(args[0]), float(args[1]))
        case "loguniform":
            return tune.loguniform(float(args[0]), float(args[1]))
        case "quniform":
            return tune.quniform(float(args[0]), float(args[1]), float(args[2]))
        case "randint":
            return tune.randint(int(args[0]), int(args[1]))
        case "choice":
            return tune.choice(copy.deepcopy(args))
        case "grid":
            return tune.grid_search(copy.deepcopy(args))
    raise AssertionError(f"unhandled distribution {dist.kind}")  # the model's Literal forbids it


def to_tune_space(params: Mapping[str, Distribution]) -> dict[str, Any]:
    """Tune's `param_space`: a flat dict keyed by dotted spec path."""
    return {path: to_tune_domain(dist) for path, dist in params.items()}


def sample_configs(
    params: Mapping[str, Distribution], *, num: int, seed: int | None
) -> list[dict[str, Any]]:
    """`num` configurations drawn up front (to run the very same ones under two schedulers)."""
    import numpy as np

    if any(dist.kind == "grid" for dist in params.values()):
        raise SpecError(["search.params: a grid cannot be sampled; use choice"])
    rng = np.random.default_rng(seed)
    space = to_tune_space(params)
    return [
        {path: plain_value(domain.sample(random_state=rng)) for path, domain in space.items()}
        for _ in range(num)
    ]


def plain_value(value: Any) -> Any:
    """Numpy scalars (Tune samples them) as Python numbers, so specs and YAML stay plain data."""
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", None) == 0:
        return value.item()
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    return value


def sampled_values(config: Mapping[str, Any], paths: list[str]) -> dict[str, Any]:
    """The searched values of one trial's config, in `search.params` order."""
    return {path: plain_value(config[path]) for path in paths if path in config}


def set_dotted(data: dict[str, Any], path: str, value: Any) -> None:
    """`data[a][b][c] = value` for `a.b.c`, creating missing mappings on the way."""
    node = data
    *parents, leaf = path.split(".")
    for key in parents:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[leaf] = value


def apply_sample(
    base: Mapping[str, Any], sample: Mapping[str, Any], *, source: str = "sampled spec"
) -> ExperimentSpec:
    """The trial's spec: `base` (spec data) with the sampled values set, the search block
    dropped, validated again (a sample outside a field's range is a `SpecError`)."""
    data = copy.deepcopy(dict(base))
    data.pop("search", None)
    for path, value in sample.items():
        set_dotted(data, path, plain_value(value))
    try:
        return validate_spec_data(data, source=source)
    except SpecError as exc:
        shown = ", ".join(f"{k}={v!r}" for k, v in sample.items())
        raise SpecError(exc.problems, source=f"{source} ({shown})") from None


def trial_spec_data(spec: ExperimentSpec) -> dict[str, Any]:
    """A trial spec as file data with no `search:` key: what best.yaml holds."""
    data = spec.dump()
    data.pop("search", None)
    return data
