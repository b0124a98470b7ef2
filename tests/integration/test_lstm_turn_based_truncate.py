"""LSTM modules on cut turn-based multi-agent episodes (ray-project/ray#60205).

Without rl_platform/connectors/state_lookback.py, RLlib 2.60's learner connector crashes on
the first training batch:

    AddStatesFromEpisodesToBatch.__call__ -> InfiniteLookbackBuffer._get_int_index
    IndexError: index 5 is out of bounds for axis 0 with size 5

because `MultiAgentEpisode.cut()` keeps one env step of lookback, while an agent that moves
every other step has its last STATE_OUT two or three env steps back.
"""

import math

import gymnasium as gym
import numpy as np
import pytest
from ray.rllib.connectors.common import AddStatesFromEpisodesToBatch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule, MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode

from rl_platform.connectors.state_lookback import FillStateLookback, lookback_horizon_for_turns
from rl_platform.modules.lstm_module import LSTMActorCriticModule
from rl_platform.spec.loading import resolve_spec_data, validate_spec_data
from tests.conftest import EXPERIMENTS

CELL = 12
PLAYERS = ("a", "b")


def _state(value: float) -> dict[str, np.ndarray]:
    return {"h": np.full(CELL, value, np.float32), "c": np.full(CELL, -value, np.float32)}


def _play(episode: MultiAgentEpisode, first_move: int, moves: int) -> None:
    """Alternating moves; move k's STATE_OUT is filled with the value 100 + k."""
    for k in range(first_move, first_move + moves):
        mover, nxt = PLAYERS[k % 2], PLAYERS[(k + 1) % 2]
        episode.add_env_step(
            observations={nxt: np.full(2, k + 1, np.float32)},
            actions={mover: 0},
            rewards={mover: 0.0},
            extra_model_outputs={mover: {Columns.STATE_OUT: _state(100.0 + k)}},
        )


def _second_chunk(horizon: int) -> MultiAgentEpisode:
    """Moves 0-4, cut with `horizon` env steps of lookback, moves 5-8 in the new chunk."""
    episode = MultiAgentEpisode(agent_to_module_mapping_fn=lambda agent_id, episode: "main")
    episode.add_env_reset(observations={"a": np.zeros(2, np.float32)}, infos={"a": {}})
    _play(episode, 0, 5)
    chunk = episode.cut(len_lookback_buffer=horizon)
    _play(chunk, 5, 4)
    return chunk.to_numpy()


def _module() -> MultiRLModule:
    config = {"encoder": [8], "lstm_cell_size": CELL, "actor": [8], "critic": [8]}
    spec = RLModuleSpec(
        module_class=LSTMActorCriticModule,
        observation_space=gym.spaces.Box(-10.0, 10.0, (2,), np.float32),
        action_space=gym.spaces.Discrete(2),
        model_config={**config, "max_seq_len": 8},
    )
    return MultiRLModuleSpec(rl_module_specs={"main": spec}).build()


def _chunk_start_states(chunk: MultiAgentEpisode, pieces: list) -> dict[str, float]:
    batch: dict = {}
    module = _module()
    for piece in pieces:
        batch = piece(rl_module=module, batch=batch, episodes=[chunk], shared_data={})
    # One row per agent: the state at the start of its chunk ([num_seqs, CELL] each).
    return {key[1]: float(rows[0]["h"][0, 0]) for key, rows in batch[Columns.STATE_IN].items()}


def test_rllib_alone_crashes_on_the_cut_chunk() -> None:
    # If this starts passing without the raise, RLlib fixed #60205 and state_lookback.py can go.
    with pytest.raises(IndexError):
        _chunk_start_states(
            _second_chunk(1), [AddStatesFromEpisodesToBatch(as_learner_connector=True)]
        )


def test_horizon_for_turns_keeps_the_state_the_actor_used() -> None:
    fill = FillStateLookback()
    chunk = _second_chunk(lookback_horizon_for_turns(len(PLAYERS)))
    starts = _chunk_start_states(
        chunk, [fill, AddStatesFromEpisodesToBatch(as_learner_connector=True)]
    )
    # Before the cut `a` made moves 0, 2, 4 and `b` moves 1, 3; the actor started the new chunk
    # from those last states (move 4's action hangs until `a` observes again).
    assert starts == {"a": 102.0, "b": 103.0}
    assert fill.filled == 0


def test_fill_falls_back_to_the_initial_state_instead_of_crashing() -> None:
    fill = FillStateLookback()
    starts = _chunk_start_states(
        _second_chunk(1), [fill, AddStatesFromEpisodesToBatch(as_learner_connector=True)]
    )
    assert starts == {"a": 0.0, "b": 0.0}  # the LSTM's zero initial state
    assert fill.filled == 2


def test_ppo_lstm_connect_four_with_truncated_episodes(ray_local) -> None:
    import torch

    from rl_platform.rllib.config import build_algorithm_config

    torch.set_num_threads(1)  # one small LSTM step is ~30x slower with 2 threads under load
    data = resolve_spec_data(
        EXPERIMENTS / "connect_four_selfplay.yaml",
        overrides=[
            "league=null",
            "env.envs_per_runner=2",
            "training.train_batch_size=200",
            "training.minibatch_size=100",
            "training.num_epochs=1",
            "logging.wandb=off",
            "logging.tensorboard=false",
        ],
    )
    # The experiment uses the MLP (the board is fully observed); this test needs the LSTM.
    data["model"] = {
        "type": "lstm",
        "encoder": [16],
        "lstm_cell_size": 16,
        "actor": [16],
        "critic": [16],
        "max_seq_len": 8,
    }
    # The cut of MultiAgentEpisodes is RLlib's stock runner's; the array runner cuts its own
    # chunks (tests/integration/test_vector_runner_training.py).
    data["env"]["runner"] = "rllib"
    spec = validate_spec_data(data)
    # 25 steps per env runner call: games (7-42 moves) are cut mid-game in most batches.
    config = build_algorithm_config(spec).env_runners(
        batch_mode="truncate_episodes", rollout_fragment_length=25
    )
    algo = config.build_algo()
    try:
        for _ in range(3):
            loss = algo.train()["learners"]["main"]["total_loss"]
            assert math.isfinite(loss)
        chunks = algo.env_runner.sample(num_timesteps=25) + algo.env_runner.sample(num_timesteps=25)
        assert any(chunk.env_t_started > 0 for chunk in chunks)  # continuation chunks occur
    finally:
        algo.stop()
