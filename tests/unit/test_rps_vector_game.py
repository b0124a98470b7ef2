"""RPSHistoryVectorGame against RPSHistoryEnv: rewards, observation layout, truncation, resets."""

import numpy as np
import pytest

from rl_platform.envs.rps_history import RPSHistoryEnv, outcome
from rl_platform.envs.rps_vector_game import RPSHistoryVectorGame
from rl_platform.envs.vector_game import DRAW, RUNNING, VectorGame


def _reference_envs(game: RPSHistoryVectorGame, **config) -> list[RPSHistoryEnv]:
    """One RPSHistoryEnv per game, playing that game's hidden cyclic strategy."""
    envs = []
    for start in game.strategy_move.tolist():
        env = RPSHistoryEnv(config)
        env.reset(seed=0)
        env._strategy_move = start  # the single env draws its own; use the vector game's
        envs.append(env)
    return envs


@pytest.mark.parametrize("reveal_history", [True, False])
def test_cyclic_games_match_the_single_env_step_for_step(reveal_history: bool) -> None:
    num_games, episode_len = 16, 5
    config = {"opponent": "cyclic", "episode_len": episode_len, "reveal_history": reveal_history}
    game = RPSHistoryVectorGame(num_games, **config, seed=1)
    start = game.reset()
    assert not start.obs.any() and start.acting.all()
    envs = _reference_envs(game, **config)
    rng = np.random.default_rng(0)
    for step in range(3 * episode_len):
        starts = game.strategy_move.copy()
        actions = rng.integers(3, size=(num_games, 1))
        out = game.step(actions)
        round_index = step % episode_len
        for g, env in enumerate(envs):
            want_reward = outcome(int(actions[g, 0]), (int(starts[g]) + round_index) % 3)
            obs, reward, terminated, truncated, _ = env.step(int(actions[g, 0]))
            assert out.rewards[g, 0] == reward == want_reward
            assert (out.terminated[g], out.truncated[g]) == (terminated, truncated)
            seen = out.final_obs[g, 0] if truncated else out.obs[g, 0]
            np.testing.assert_array_equal(seen, obs)
        if out.truncated.any():
            assert out.truncated.all()  # all games started together
            envs = _reference_envs(game, **config)


def test_truncation_auto_reset_and_winner() -> None:
    game = RPSHistoryVectorGame(3, episode_len=2, seed=0)
    game.reset()
    starts = game.strategy_move.copy()
    # Game 0 wins both rounds, game 1 loses both, game 2 wins then loses. The cyclic opponent
    # plays start + round: start + round + 1 beats it, start + round + 2 loses to it.
    first = (starts + np.array([1, 2, 1])) % 3
    out = game.step(first[:, None])
    assert out.rewards[:, 0].tolist() == [1.0, -1.0, 1.0]
    assert out.winner.tolist() == [RUNNING] * 3 and out.final_obs is None
    assert not out.truncated.any() and out.obs[:, 0, 3].tolist() == [0.5] * 3
    second = (starts + 1 + np.array([1, 2, 2])) % 3
    out = game.step(second[:, None])
    assert out.rewards[:, 0].tolist() == [1.0, -1.0, -1.0]
    assert out.truncated.all() and not out.terminated.any()
    assert out.winner.tolist() == [0, 1, DRAW]
    assert out.final_obs[:, 0, 3].tolist() == [1.0] * 3
    assert not out.obs.any()  # new episodes: nothing played yet
    assert game.round.tolist() == [0, 0, 0]


def test_a_fully_biased_opponent_always_plays_its_favourite() -> None:
    game = RPSHistoryVectorGame(32, opponent="biased", bias=1.0, seed=3)
    game.reset()
    favourite = game.strategy_move.copy()
    for _ in range(4):
        out = game.step(np.zeros((32, 1), np.int64))  # always rock
        assert out.obs[:, 0, 4:].argmax(axis=1).tolist() == favourite.tolist()
        want = [outcome(0, int(move)) for move in favourite]
        assert out.rewards[:, 0].tolist() == want


def test_protocol_spaces_and_bad_input() -> None:
    game = RPSHistoryVectorGame(2)
    assert isinstance(game, VectorGame)
    assert (game.num_seats, game.turn_based, game.action_space.n) == (1, False, 3)
    assert game.observation_space == RPSHistoryEnv().observation_space
    assert game.reset().obs.shape == (2, 1, 7)
    with pytest.raises(ValueError, match="moves are"):
        game.step(np.array([[3], [0]]))
    with pytest.raises(ValueError, match="opponent"):
        RPSHistoryVectorGame(2, opponent="mirror")
