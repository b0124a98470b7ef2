"""What an `env.id` resolves to, and the one-line errors for ids that cannot be built (no Ray)."""

import pytest

from rl_platform.base.errors import SpecError
from rl_platform.envs.env_info import check_env, is_multi_agent, vector_game_of
from rl_platform.envs.env_kwargs import unknown_env_kwargs
from rl_platform.envs.sources import EnvIdError, resolve_env_source
from rl_platform.envs.user_envs import build_product, product_kind
from rl_platform.spec import validate_spec_data

FIXTURES = "tests.fixtures"


@pytest.mark.parametrize(
    ("env_id", "origin", "calling", "kind"),
    [
        ("rlp/Duel-v0", "platform", "factory", "multi"),
        ("CartPole-v1", "gymnasium", "kwargs", "single"),
        ("ALE/Pong-v5", "gymnasium", "kwargs", "single"),
        (f"{FIXTURES}.corridor_env:Corridor-v0", "gymnasium", "kwargs", "single"),
        (f"{FIXTURES}.corridor_env:CorridorEnv", "entry_point", "kwargs", "single"),
        (f"{FIXTURES}.corridor_env:make_corridor", "entry_point", "kwargs", None),
        (f"{FIXTURES}.take_away:TakeAwayGame", "entry_point", "vector_game", "multi"),
        ("pettingzoo.classic.tictactoe_v3", "pettingzoo", "pettingzoo", "multi"),
        ("pettingzoo.classic.rps_v2", "pettingzoo", "pettingzoo", "multi"),
    ],
)
def test_each_kind_of_id_resolves(env_id, origin, calling, kind) -> None:
    source = resolve_env_source(env_id)
    assert (source.origin, source.calling, source.kind) == (origin, calling, kind)


def test_a_factory_function_is_built_once_to_learn_its_kind() -> None:
    assert not is_multi_agent(f"{FIXTURES}.corridor_env:make_corridor", {"length": 4})
    assert is_multi_agent("pettingzoo.classic.tictactoe_v3")


def test_a_user_vector_game_is_its_own_fast_core() -> None:
    env_id = f"{FIXTURES}.take_away:TakeAwayGame"
    assert vector_game_of(env_id) == env_id
    assert vector_game_of("pettingzoo.classic.tictactoe_v3") is None
    assert product_kind(build_product(resolve_env_source(env_id), {"stones": 5})) == "vector_game"


@pytest.mark.parametrize(
    ("env_id", "message"),
    [
        ("nonexistent.module:Env", "no module named 'nonexistent'"),
        (f"{FIXTURES}.corridor_env:Corridor", "did you mean tests.fixtures.corridor_env:Corr"),
        ("pettingzoo.classic", "neither parallel_env() nor env()"),
        ("CartPol-v1", "did you mean CartPole-v1"),
        ("not an id", "unknown env id"),
    ],
)
def test_ids_that_name_nothing_say_why(env_id, message) -> None:
    with pytest.raises(EnvIdError) as caught:
        resolve_env_source(env_id)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_an_import_error_inside_user_code_points_at_the_users_line() -> None:
    with pytest.raises(EnvIdError) as caught:
        resolve_env_source(f"{FIXTURES}.broken_env:Env")
    text = str(caught.value)
    assert "NameError: name 'undefined_name' is not defined" in text
    assert "tests/fixtures/broken_env.py:3 in <module>" in text
    assert "rl_platform" not in text and "importlib" not in text


def test_a_missing_optional_dependency_names_the_module() -> None:
    with pytest.raises(EnvIdError, match="No module named 'pymunk'"):
        resolve_env_source("pettingzoo.butterfly.pistonball_v6")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("make_nothing", "returned a dict; expected a gymnasium.Env"),
        ("write_marker", "declared to return nothing"),
        ("TextEnv", "observes a Text space"),
    ],
)
def test_products_rllib_cannot_use_are_refused(name, message) -> None:
    with pytest.raises(EnvIdError, match=message):
        check_env(f"{FIXTURES}.corridor_env:{name}")


def test_user_env_kwargs_are_checked_against_the_signature() -> None:
    env_id = f"{FIXTURES}.corridor_env:CorridorEnv"
    assert unknown_env_kwargs(env_id, ["length", "seed"]) == ([], ["length", "max_steps", "seed"])
    assert unknown_env_kwargs(env_id, ["lenght"])[0] == ["lenght"]


def _spec(env: dict) -> dict:
    return {
        "name": "byo",
        "algo": "PPO",
        "env": env,
        "training": {"train_batch_size": 200, "minibatch_size": 50},
        "stop": {"iterations": 1},
    }


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        (
            {"id": "nonexistent.module:Env"},
            "env.id: 'nonexistent.module:Env' is invalid: no module",
        ),
        (
            {"id": f"{FIXTURES}.corridor_env:make_nothing"},
            "env: env.id 'tests.fixtures.corridor_env:make_nothing': returned a dict",
        ),
        (
            {"id": f"{FIXTURES}.corridor_env:CorridorEnv", "kwargs": {"lenght": 3}},
            "did you mean 'length'?",
        ),
    ],
)
def test_spec_errors_name_the_field_in_one_line(env, needle) -> None:
    with pytest.raises(SpecError) as caught:
        validate_spec_data(_spec(env))
    assert len(caught.value.problems) == 1
    assert needle in caught.value.problems[0]


def test_rlp_validate_names_env_id_and_the_import_error(write_spec) -> None:
    from typer.testing import CliRunner

    from rl_platform.cli import app

    path = write_spec(
        "name: byo\nalgo: PPO\nenv: {id: 'nonexistent.module:Env'}\nstop: {iterations: 1}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "env.id" in lines[0] and "no module named 'nonexistent'" in lines[0]
    assert "Traceback" not in result.output
