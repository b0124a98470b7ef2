"""The `search:` block: distributions and shorthand -> Tune spaces, paths, sampled specs."""

import numpy as np
import pytest
from ray.tune.search.sample import Categorical, Float, Integer

from rl_platform.base.errors import SpecError
from rl_platform.search.space import apply_sample, sample_configs, to_tune_space
from rl_platform.search.tuner import _searcher
from rl_platform.spec import validate_spec_data

BASE = {"name": "demo", "env": {"id": "CartPole-v1"}, "stop": {"env_steps": 9000}}


def _spec(params, **search):
    return validate_spec_data({**BASE, "search": {"params": params, **search}})


def _problems(params, **search) -> str:
    with pytest.raises(SpecError) as info:
        _spec(params, **search)
    return str(info.value)


def test_every_distribution_translates_to_its_tune_domain_with_bounds():
    spec = _spec(
        {
            "training.gamma": {"uniform": [0.9, 0.99]},
            "training.lr": {"loguniform": [1e-4, 1e-2]},
            "training.entropy_coeff": {"quniform": [0.0, 0.02, 0.005]},
            "training.num_epochs": {"randint": [2, 11]},
            "model.hidden": {"choice": [[32, 32], [64, 64]]},
            "seed": {"grid": [0, 1, 2]},
        }
    )
    space = to_tune_space(spec.search.params)
    gamma, lr, ent, epochs = (
        space[k]
        for k in ("training.gamma", "training.lr", "training.entropy_coeff", "training.num_epochs")
    )
    assert isinstance(gamma, Float) and (gamma.lower, gamma.upper) == (0.9, 0.99)
    assert type(gamma.get_sampler()).__name__ == "_Uniform"
    assert isinstance(lr, Float) and (lr.lower, lr.upper) == (1e-4, 1e-2)
    assert type(lr.get_sampler()).__name__ == "_LogUniform"
    assert isinstance(ent, Float) and (ent.lower, ent.upper) == (0.0, 0.02)
    assert type(ent.get_sampler()).__name__ == "Quantized" and ent.get_sampler().q == 0.005
    assert isinstance(epochs, Integer) and (epochs.lower, epochs.upper) == (2, 11)
    assert isinstance(space["model.hidden"], Categorical)
    assert space["model.hidden"].categories == [[32, 32], [64, 64]]
    assert space["seed"] == {"grid_search": [0, 1, 2]}


def test_shorthand_equals_the_explicit_form_and_dumps_canonically():
    short = _spec({"training.lr__loguniform": [1e-4, 1e-3], "training.num_epochs__choice": [4, 8]})
    explicit = _spec(
        {"training.lr": {"loguniform": [1e-4, 1e-3]}, "training.num_epochs": {"choice": [4, 8]}}
    )
    assert short.search == explicit.search
    dumped = short.dump()["search"]["params"]
    assert dumped == {
        "training.lr": {"loguniform": [1e-4, 1e-3]},
        "training.num_epochs": {"choice": [4, 8]},
    }
    assert validate_spec_data(short.dump()) == short  # the dump is a valid spec again


def test_shorthand_and_explicit_for_the_same_path_is_an_error():
    text = _problems({"training.lr__uniform": [0.1, 0.2], "training.lr": {"choice": [0.1]}})
    assert "'training.lr' is given twice" in text


def test_field_name_and_alias_paths_are_canonicalised():
    spec = _spec(
        {
            "training.lambda_": {"uniform": [0.9, 0.99]},
            "env.kwargs.sutton_barto_reward": {"choice": [True, False]},
        }
    )
    assert list(spec.search.params) == ["training.lambda", "env.kwargs.sutton_barto_reward"]


def test_league_weights_and_bc_fields_are_searchable():
    spec = _spec(
        {
            "league.opponent_mix.based": {"uniform": [0.1, 0.5]},
            "league.matchmaking": {"choice": ["pfsp", "uniform"]},
            "bc.coef": {"loguniform": [0.01, 1.0]},
            "bc.schedule.until_env_steps": {"choice": [1000, 2000]},
        }
    )
    assert list(spec.search.params) == [
        "league.opponent_mix.based",
        "league.matchmaking",
        "bc.coef",
        "bc.schedule.until_env_steps",
    ]
    assert "did you mean 'bc.coef'?" in _problems({"bc.cof": {"uniform": [0.1, 1.0]}})


def test_optuna_gets_the_same_bounds_as_tune():
    """`searcher: optuna` hands our Tune space to OptunaSearch, which converts it itself."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
    from ray.tune.search.optuna import OptunaSearch

    spec = _spec(
        {
            "training.gamma": {"uniform": [0.9, 0.99]},
            "training.lr": {"loguniform": [1e-4, 1e-2]},
            "training.entropy_coeff": {"quniform": [0.0, 0.02, 0.005]},
            "training.num_epochs": {"randint": [2, 11]},
            "training.minibatch_size": {"choice": [64, 128]},
            "league.opponent_mix.based": {"uniform": [0.1, 0.5]},
        },
        searcher="optuna",
    )
    optuna_space = OptunaSearch.convert_search_space(to_tune_space(spec.search.params))
    assert optuna_space == {
        "training.gamma": FloatDistribution(0.9, 0.99),
        "training.lr": FloatDistribution(1e-4, 1e-2, log=True),
        "training.entropy_coeff": FloatDistribution(0.0, 0.02, step=0.005),
        "training.num_epochs": IntDistribution(2, 10),  # randint's high is excluded in both
        "training.minibatch_size": CategoricalDistribution([64, 128]),
        "league.opponent_mix.based": FloatDistribution(0.1, 0.5),
    }


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("training.lrr", "did you mean 'training.lr'?"),
        ("modle.hidden", "did you mean 'model.hidden'?"),
        ("stop.env_steps", "not searchable"),
        ("name", "not searchable"),
        ("training", "a section, not a field"),
        ("training.lr.x", "not a field of the spec"),
    ],
)
def test_bad_paths_name_the_path_with_a_hint(path, expected):
    text = _problems({path: {"choice": [1, 2]}})
    assert f"search.params.{path}" in text and expected in text


@pytest.mark.parametrize(
    ("dist", "expected"),
    [
        ({"logunifrom": [1e-4, 1e-3]}, "did you mean 'loguniform'?"),
        ({"loguniform": [0.0, 1e-3]}, "0 < low < high"),
        ({"uniform": [0.99, 0.9]}, "low < high"),
        ({"uniform": [0.9]}, "[low, high]"),
        ({"quniform": [0.0, 0.1, 0.0]}, "q must be > 0"),
        ({"randint": [1.5, 4]}, "integers"),
        ({"choice": []}, "non-empty"),
        ({"grid": "abc"}, "takes a list"),
        ({"uniform": [0.1, 0.2], "choice": [1]}, "one distribution"),
        ([0.1, 0.2], "bare list is ambiguous"),
    ],
)
def test_bad_distributions_say_what_is_wrong(dist, expected):
    text = _problems({"training.gamma": dist})
    assert "search.params.training.gamma" in text and expected in text


def test_optuna_rejects_grids_and_non_scalar_choices():
    assert "optuna cannot search a grid" in _problems({"seed": {"grid": [0, 1]}}, searcher="optuna")
    text = _problems({"model.hidden": {"choice": [[32], [64]]}}, searcher={"type": "optuna"})
    assert "choices must be scalars" in text
    assert (
        _spec({"training.lr": {"choice": [1e-3, 3e-4]}}, searcher="optuna").search.searcher.type
        == "optuna"
    )


def test_sampled_values_are_applied_and_revalidated():
    spec = _spec({"training.lr": {"loguniform": [1e-4, 1e-3]}})
    sample = {
        "training.lr": np.float64(5e-4),
        "model.hidden": [32, 32],
        "training.num_epochs": np.int64(3),
        "env.kwargs.sutton_barto_reward": True,
    }
    trial = apply_sample(spec.dump(), sample)
    assert trial.training.lr == 5e-4 and type(trial.training.lr) is float
    assert trial.training.num_epochs == 3 and trial.model.hidden == [32, 32]
    assert trial.env.kwargs == {"sutton_barto_reward": True}
    assert trial.search is None and trial.name == "demo"


def test_a_sample_outside_the_field_range_is_a_spec_error():
    spec = _spec({"training.lr": {"uniform": [0.5, 2.0]}})
    with pytest.raises(SpecError) as info:
        apply_sample(spec.dump(), {"training.lr": 1.5})
    assert "training.lr" in str(info.value) and "1.5" in str(info.value)


def test_sample_configs_are_reproducible_and_within_bounds():
    spec = _spec(
        {
            "training.lr": {"loguniform": [1e-4, 1e-3]},
            "training.num_epochs": {"randint": [2, 5]},
            "training.minibatch_size": {"choice": [64, 128]},
        }
    )
    first = sample_configs(spec.search.params, num=20, seed=3)
    assert first == sample_configs(spec.search.params, num=20, seed=3)
    assert first != sample_configs(spec.search.params, num=20, seed=4)
    for config in first:
        assert 1e-4 <= config["training.lr"] <= 1e-3 and type(config["training.lr"]) is float
        assert config["training.num_epochs"] in (2, 3, 4)
        assert config["training.minibatch_size"] in (64, 128)
        apply_sample(spec.dump(), config)  # every sample is a valid spec
    with pytest.raises(SpecError, match="grid cannot be sampled"):
        sample_configs(_spec({"seed": {"grid": [0, 1]}}).search.params, num=2, seed=0)


@pytest.mark.parametrize("limit", [None, 1, 3])
def test_the_random_searcher_itself_holds_the_concurrency_limit(limit):
    # Tune ignores `max_concurrent_trials` (with a warning) for a BasicVariantGenerator, so the
    # spec's limit must be on the generator or trials run unbounded.
    params = {"training.lr": {"loguniform": [1e-4, 1e-3]}}
    spec = _spec(params, max_concurrent=limit) if limit else _spec(params)
    assert _searcher(spec.search, None).max_concurrent == (limit or 0)
