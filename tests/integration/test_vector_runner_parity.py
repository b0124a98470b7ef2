"""The array env runner against RLlib's stock runner on the same games and the same policy.

With a greedy policy and no chance in the game (duel without spawn jitter, connect four), all
games of a runner are the same game, and both runners must record the same trajectory for
each seat: observations, actions, rewards and the end of the game. The turn-based case checks
that rewards reach the seat that did not move last (the loser of connect four).
"""

from typing import Any

import numpy as np
import pytest
import tree

from rl_platform.env_runner.vector_env_runner import VectorEnvRunner
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.spec import validate_spec_data

DUEL = {
    "name": "parity_duel",
    "algo": "PPO",
    "seed": 3,
    "env": {
        "id": "rlp/Duel-v0",
        "envs_per_runner": 4,
        "kwargs": {"max_steps": 40, "spawn_jitter": 0.0},
    },
    "training": {"train_batch_size": 320, "minibatch_size": 160, "num_epochs": 1},
    "model": {"type": "mlp", "hidden": [32, 32]},
}
CONNECT_FOUR = {
    "name": "parity_c4",
    "algo": "PPO",
    "seed": 3,
    "env": {"id": "pettingzoo/connect_four_v3", "envs_per_runner": 4},
    "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
    "model": {"type": "mlp", "hidden": [32, 32]},
}


LSTM = {
    "type": "lstm",
    "encoder": [16],
    "lstm_cell_size": 16,
    "actor": [16],
    "critic": [16],
    "max_seq_len": 8,
}
TRANSFORMER = {
    "type": "transformer_lstm",
    "history": 6,
    "layers": 1,
    "heads": 2,
    "d_model": 16,
    "lstm_cell_size": 16,
    "actor": [16],
    "critic": [16],
    "obs_encoder": [16],
    "max_seq_len": 8,
    "obs_split": {"self": [0, 32], "opponent": [32, 64]},
}
C4_TRANSFORMER = {**TRANSFORMER, "obs_split": {"self": [0, 42], "opponent": [42, 84]}}
STREAMING = {**TRANSFORMER, "encoder": "streaming"}
CASES = [
    pytest.param(DUEL, 4 * 60, id="duel-mlp"),
    pytest.param({**DUEL, "model": LSTM}, 4 * 60, id="duel-lstm"),
    pytest.param({**DUEL, "model": TRANSFORMER}, 4 * 60, id="duel-transformer"),
    pytest.param({**DUEL, "model": STREAMING}, 4 * 60, id="duel-streaming"),
    pytest.param(CONNECT_FOUR, 4 * 50, id="connect_four-mlp"),
    pytest.param({**CONNECT_FOUR, "model": C4_TRANSFORMER}, 4 * 50, id="connect_four-transformer"),
]


def _runner(data: dict, runner: str) -> Any:
    spec = validate_spec_data({**data, "env": {**data["env"], "runner": runner}})
    return build_algorithm_config(spec).build_algo()


def _finished_trajectories(episodes: list[Any]) -> dict[str, dict[str, Any]]:
    """The first finished game's per-agent (obs, actions, rewards, terminated)."""
    found: dict[str, dict[str, Any]] = {}
    for episode in episodes:
        agents = getattr(episode, "agent_episodes", None)
        pairs = agents.items() if agents is not None else [(episode.agent_id, episode)]
        for agent_id, sa in pairs:
            if sa.is_done and agent_id not in found and sa.t_started == 0:
                found[agent_id] = {
                    "obs": tree.map_structure(np.asarray, sa.get_observations()),
                    "actions": np.asarray(sa.get_actions()),
                    "rewards": np.asarray(sa.get_rewards(), np.float32),
                    "terminated": sa.is_terminated,
                }
    return found


def _sample_greedy(algo: Any, weights: Any, steps: int) -> dict[str, dict[str, Any]]:
    runner = algo.env_runner
    runner.module.set_state(weights)
    return _finished_trajectories(runner.sample(num_timesteps=steps, explore=False))


@pytest.mark.parametrize(("data", "steps"), CASES)
def test_vector_and_stock_runner_record_the_same_games(ray_local, data, steps) -> None:
    stock, vector = _runner(data, "rllib"), _runner(data, "vector")
    try:
        assert isinstance(vector.env_runner, VectorEnvRunner)
        assert not isinstance(stock.env_runner, VectorEnvRunner)
        weights = stock.env_runner.module.get_state()
        expected = _sample_greedy(stock, weights, steps)
        got = _sample_greedy(vector, weights, steps)
        assert set(expected) == set(got) == {"player_0", "player_1"}
        for agent_id, want in expected.items():
            have = got[agent_id]
            tree.map_structure(np.testing.assert_array_equal, have["obs"], want["obs"])
            np.testing.assert_array_equal(have["actions"], want["actions"])
            np.testing.assert_allclose(have["rewards"], want["rewards"], rtol=1e-6)
            assert have["terminated"] == want["terminated"]
    finally:
        stock.stop()
        vector.stop()
