"""`env.runner`: which env runner a spec gets (rl_platform/spec/runner_choice.py)."""

import pytest

from rl_platform.base.errors import SpecError
from rl_platform.envs.env_info import env_facts
from rl_platform.spec import validate_spec_data
from rl_platform.spec.runner_choice import choose_runner


def _choice(requested: str, **kw):
    args = {"env_id": "rlp/Duel-v0", "algo": "PPO", "wrappers": []} | kw
    env = env_facts(args.pop("env_id"))
    return choose_runner(requested=requested, env=env, **args)


def test_auto_picks_the_array_runner_for_games_with_a_vector_core() -> None:
    assert _choice("auto").kind == "vector"
    assert _choice("auto", env_id="pettingzoo/connect_four_v3").kind == "vector"


@pytest.mark.parametrize(
    ("kw", "reason"),
    [
        ({"env_id": "CartPole-v1"}, "no vectorized multi-agent game core"),
        ({"env_id": "rlp/RPSHistory-v0"}, "no vectorized multi-agent game core"),
        ({"algo": "DQN"}, "algo DQN"),
        ({"wrappers": ["normalize_obs"]}, "env.wrappers"),
    ],
)
def test_auto_falls_back_and_vector_refuses_with_the_reason(kw, reason) -> None:
    choice = _choice("auto", **kw)
    assert choice.kind == "rllib" and reason in choice.reason
    with pytest.raises(ValueError, match=reason):
        _choice("vector", **kw)


def test_rllib_is_always_honoured() -> None:
    assert _choice("rllib").kind == "rllib"


def test_spec_validation_names_the_field_and_the_way_out() -> None:
    data = {"name": "x", "env": {"id": "CartPole-v1", "runner": "vector"}}
    with pytest.raises(SpecError) as err:
        validate_spec_data(data)
    message = str(err.value)
    assert "env.runner vector cannot run this spec" in message
    assert "use env.runner auto or rllib" in message
