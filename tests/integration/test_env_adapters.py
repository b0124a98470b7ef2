"""The adapters that put a user's game in front of RLlib: a `VectorGame` played one game at a
time (`VectorGameEnv`) and PettingZoo's Parallel envs (`ParallelAdapter`). No Ray is started."""

import numpy as np

from rl_platform.env_adapters.registry import make_env
from rl_platform.env_adapters.vector_game_env import VectorGameEnv
from tests.fixtures.take_away import TakeAwayGame


def _take(stones: int) -> int:
    return stones - 1  # action a takes a + 1 stones


def test_a_turn_based_vector_game_pays_each_seat_on_its_next_turn() -> None:
    env = VectorGameEnv(TakeAwayGame(1, stones=5))
    obs, _ = env.reset()
    assert list(obs) == ["player_0"]
    np.testing.assert_array_equal(obs["player_0"]["action_mask"], [1, 1, 1])
    obs, rewards, terminateds, _, _ = env.step({"player_0": _take(2)})  # 3 left
    assert list(obs) == ["player_1"] and rewards == {"player_1": 0.0}
    assert not terminateds["__all__"]
    obs, rewards, _, _, _ = env.step({"player_1": _take(1)})  # 2 left
    assert list(obs) == ["player_0"]
    np.testing.assert_array_equal(obs["player_0"]["action_mask"], [1, 1, 0])
    obs, rewards, terminateds, _, infos = env.step({"player_0": _take(2)})  # player_0 wins
    assert terminateds == {"player_0": True, "player_1": True, "__all__": True}
    assert rewards == {"player_0": 1.0, "player_1": -1.0}
    assert infos["player_0"]["outcome"] == "win" and infos["player_1"]["outcome"] == "loss"
    assert set(obs) == {"player_0", "player_1"}  # both see the final position


def test_make_env_builds_a_user_vector_game_as_one_game_env() -> None:
    env = make_env("tests.fixtures.take_away:TakeAwayGame", [], {"stones": 4, "seed": 3})
    assert isinstance(env, VectorGameEnv) and env.game.num_games == 1
    assert env.observation_spaces["player_1"]["observations"].shape == (5,)


def test_pettingzoo_parallel_envs_move_together_with_one_hot_observations() -> None:
    env = make_env("pettingzoo.classic.rps_v2", [], {"seed": 0})
    obs, _ = env.reset()
    assert set(obs) == {"player_0", "player_1"}
    assert env.observation_spaces["player_0"].contains(obs["player_0"])
    obs, rewards, terminateds, truncateds, _ = env.step({"player_0": 0, "player_1": 2})
    assert rewards == {"player_0": 1, "player_1": -1}  # rock beats scissors
    np.testing.assert_array_equal(obs["player_0"], [0, 0, 1, 0])  # sees the other's scissors
    assert terminateds["__all__"] is False and "__all__" in truncateds


def test_a_users_rllib_multi_agent_env_takes_the_env_config() -> None:
    from rl_platform.envs.env_info import is_multi_agent
    from rl_platform.envs.sources import resolve_env_source

    env_id = "tests.fixtures.pennies_env:PenniesMultiAgentEnv"
    source = resolve_env_source(env_id)
    assert (source.calling, source.kind) == ("env_config", "multi")
    assert is_multi_agent(env_id, {"rounds": 3})
    env = make_env(env_id, [], {"rounds": 3})
    assert env.rounds == 3 and env.possible_agents == ["player_0", "player_1"]
