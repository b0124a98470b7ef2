"""ConnectFourVectorGame against PettingZoo's connect_four_v3, move for move.

The PettingZoo side is read the way RLlib's PettingZooEnv reads it (`env.last()` for the agent
to move; at the end, `last()` then `step(None)` for every agent) and converted with our
`convert_obs`, so the reference is what an agent sees through `pettingzoo/connect_four_v3`.
Importing pettingzoo_adapter imports Ray's modules but starts no Ray.
"""

import numpy as np
import pytest
from pettingzoo.classic import connect_four_v3

from rl_platform.env_adapters.pettingzoo_adapter import convert_obs, converted_space
from rl_platform.envs.connect_four import ConnectFourVectorGame
from rl_platform.envs.vector_game import DRAW, RUNNING, VectorGame

AGENTS = ("player_0", "player_1")
KEYS = ("observations", "action_mask")

RAW_SPACE = connect_four_v3.env().observation_space("player_0")


def masked_obs(obs: dict) -> dict:
    """What the agent sees: PettingZoo's observation through the adapter."""
    return convert_obs(RAW_SPACE, obs)


def _seat_obs(obs: dict[str, np.ndarray], game: int, seat: int) -> dict[str, np.ndarray]:
    return {key: obs[key][game, seat] for key in KEYS}


def _assert_obs_equal(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    for key in KEYS:
        assert got[key].dtype == np.float32
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


def _finish(env) -> dict[str, tuple[dict[str, np.ndarray], float, bool, bool]]:
    """Each agent's last (obs, reward, terminated, truncated), as RLlib's PettingZooEnv sees it."""
    last = {}
    while env.agents:
        obs, reward, terminated, truncated, _ = env.last()
        last[env.agent_selection] = (masked_obs(obs), reward, terminated, truncated)
        env.step(None)
    return last


def _winner_from_rewards(rewards: list[float]) -> int:
    """The seat with the higher final reward; a draw when they are equal."""
    return DRAW if rewards[0] == rewards[1] else int(np.argmax(rewards))


def _check_to_move(out_obs: dict[str, np.ndarray], acting: np.ndarray, envs: list) -> None:
    """Before a move: the agent to move, and both agents' boards and masks, agree."""
    for g, env in enumerate(envs):
        seat = AGENTS.index(env.agent_selection)
        assert acting[g].tolist() == [seat == 0, seat == 1]
        obs, reward, terminated, truncated, _ = env.last()
        assert (reward, terminated, truncated) == (0, False, False)
        _assert_obs_equal(_seat_obs(out_obs, g, seat), masked_obs(obs))
        other = AGENTS[1 - seat]  # PettingZoo's observe gives the waiting agent a zero mask
        _assert_obs_equal(_seat_obs(out_obs, g, 1 - seat), masked_obs(env.observe(other)))


def _check_after_move(out, envs: list) -> int:
    """After a move: game ends, rewards, winner and final observations agree; returns #ended."""
    ended = 0
    for g, env in enumerate(envs):
        if not all(env.terminations.values()):
            assert not out.terminated[g] and out.winner[g] == RUNNING
            assert out.rewards[g].tolist() == [0.0, 0.0]
            continue
        ended += 1
        last = _finish(env)
        rewards = [float(last[agent][1]) for agent in AGENTS]
        assert out.terminated[g] and not out.truncated[g]
        assert out.rewards[g].tolist() == rewards
        assert out.components["win_loss"][g].tolist() == rewards
        assert out.winner[g] == _winner_from_rewards(rewards)
        for seat, agent in enumerate(AGENTS):
            _assert_obs_equal(_seat_obs(out.final_obs, g, seat), last[agent][0])
        env.reset()
    return ended


def test_random_games_match_pettingzoo_move_for_move() -> None:
    num_games, min_finished = 64, 200
    rng = np.random.default_rng(0)
    envs = [connect_four_v3.env() for _ in range(num_games)]
    for env in envs:
        env.reset()
    game = ConnectFourVectorGame(num_games)
    start = game.reset()
    obs, acting = start.obs, start.acting
    finished, winners = 0, set()
    while finished < min_finished:
        _check_to_move(obs, acting, envs)
        actions = np.full((num_games, 2), -1, np.int64)  # the waiting seat's -1 is ignored
        for g, env in enumerate(envs):
            legal = np.flatnonzero(env.last()[0]["action_mask"])
            column = int(rng.choice(legal))
            actions[g, AGENTS.index(env.agent_selection)] = column
            env.step(column)
        out = game.step(actions)
        finished += _check_after_move(out, envs)
        if out.terminated.any():
            winners.update(out.winner[out.terminated].tolist())
        obs, acting = out.obs, out.acting
    assert {0, 1} <= winners  # both seats won some game; the replay covered real endings


def test_spaces_match_the_pettingzoo_adapter() -> None:
    game = ConnectFourVectorGame(3)
    assert isinstance(game, VectorGame)
    assert (game.num_seats, game.turn_based) == (2, True)
    assert game.observation_space == converted_space(
        connect_four_v3.env().observation_space("player_0")
    )
    assert game.action_space.n == 7
    obs = game.reset().obs
    assert obs["observations"].shape == (3, 2, 84) and obs["action_mask"].shape == (3, 2, 7)
    assert game.observation_space.contains(_seat_obs(obs, 0, 0))


def test_new_games_start_with_seat_zero_to_move_and_an_empty_board() -> None:
    start = ConnectFourVectorGame(4).reset()
    assert start.acting.tolist() == [[True, False]] * 4
    assert not start.obs["observations"].any()
    assert start.obs["action_mask"][:, 0].tolist() == [[1.0] * 7] * 4
    assert not start.obs["action_mask"][:, 1].any()


def _play(game: ConnectFourVectorGame, columns: list[list[int]]):
    """Play one column per game per move (placed in the acting seat's entry)."""
    out = None
    for move in columns:
        actions = np.zeros((game.num_games, 2), np.int64)
        actions[np.arange(game.num_games), game.to_move] = move
        out = game.step(actions)
    return out


def test_auto_reset_starts_a_new_game_and_keeps_the_final_board() -> None:
    game = ConnectFourVectorGame(2)
    game.reset()
    # Game 0: seat 0 stacks column 0 and wins vertically on its 4th piece; game 1 spreads out.
    moves = [[0, 0], [1, 1], [0, 2], [1, 3], [0, 4], [1, 5]]
    out = _play(game, moves)
    assert out.final_obs is None
    out = _play(game, [[0, 6]])
    assert out.terminated.tolist() == [True, False]
    assert out.winner.tolist() == [0, RUNNING]
    assert out.rewards[0].tolist() == [1.0, -1.0]
    final = out.final_obs["observations"][0].reshape(2, 6, 7, 2)
    assert final[0, 2:, 0, 0].all() and final[0].sum() == 4 + 3  # seat 0's view: own, opp
    assert final[1, 2:, 0, 1].all() and final[1, :, 1, 0].sum() == 3  # seat 1's view, swapped
    assert out.final_obs["action_mask"][0].tolist() == [[1.0] * 7] * 2
    # The new game 0: empty board, seat 0 to move. Game 1 goes on with seat 1 to move.
    assert not out.obs["observations"][0].any()
    assert out.acting.tolist() == [[True, False], [False, True]]
    assert out.obs["observations"][1].sum() == 2 * 7


def test_a_draw_ends_with_zero_rewards() -> None:
    game = ConnectFourVectorGame(1)
    game.reset()
    # Columns in pairs 0,1 / 2,3 / 4,5 then 6, three rows at a time: no four in a row.
    order = []
    for pair in ((0, 1), (2, 3), (4, 5)):
        order += [pair[0], pair[1]] * 3 + [pair[1], pair[0]] * 3
    order += [6] * 6
    out = _play(game, [[c] for c in order])
    assert out.terminated.tolist() == [True] and out.winner.tolist() == [DRAW]
    assert out.rewards.tolist() == [[0.0, 0.0]]
    assert not out.final_obs["action_mask"].any()  # full board: no legal column


def test_an_illegal_move_ends_the_game_like_pettingzoo() -> None:
    columns = [0] * 7  # the 7th piece in column 0 is illegal (player_0 plays it)
    env = connect_four_v3.env()
    env.reset()
    for column in columns:
        env.step(column)
    last = _finish(env)
    game = ConnectFourVectorGame(1)
    game.reset()
    out = _play(game, [[c] for c in columns])
    assert out.rewards[0].tolist() == [float(last[agent][1]) for agent in AGENTS] == [-1.0, 0.0]
    assert out.terminated.tolist() == [True] and out.truncated.tolist() == [False]
    assert out.winner.tolist() == [1]
    for seat, agent in enumerate(AGENTS):
        _assert_obs_equal(_seat_obs(out.final_obs, 0, seat), last[agent][0])


def test_bad_actions_raise() -> None:
    game = ConnectFourVectorGame(2)
    game.reset()
    with pytest.raises(ValueError, match="columns are 0"):
        game.step(np.array([[7, 0], [0, 0]]))
    with pytest.raises(ValueError, match="shape"):
        game.step(np.zeros((2,), np.int64))
