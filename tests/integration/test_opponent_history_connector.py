"""OpponentHistory env-to-module connector: spaces, write-back, resets, cuts, multi-agent.

Episodes are driven by hand or by a local SingleAgentEnvRunner; no Ray runtime is needed.
"""

import gymnasium as gym
import numpy as np
import pytest
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.env.single_agent_episode import SingleAgentEpisode

from rl_platform.base.errors import SpecError
from rl_platform.connectors.opponent_history import OpponentHistory
from rl_platform.envs.rps_history import OBS_SPLIT, RPSHistoryEnv
from rl_platform.modules import history_connector_for
from rl_platform.nets.history_window import windows_from_sequence
from rl_platform.spec.model_type import OpponentHistoryInputs
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

SPLIT = {"self": [0, 2], "opponent": [2, 5]}
BOX = gym.spaces.Box(-100.0, 100.0, (5,), np.float32)


def _connector(space: gym.Space = BOX, history: int = 3, **kw) -> OpponentHistory:
    return OpponentHistory(space, gym.spaces.Discrete(2), history=history, obs_split=SPLIT, **kw)


def _obs(t: int) -> np.ndarray:
    return np.array([t, -t, 10 + t, 20 + t, 30 + t], np.float32)


def _call(connector: OpponentHistory, episodes: list) -> dict:
    return connector(rl_module=None, batch={}, episodes=episodes, explore=True, shared_data={})


def _run_episode(connector: OpponentHistory, steps: int) -> SingleAgentEpisode:
    episode = SingleAgentEpisode(observation_space=BOX, action_space=gym.spaces.Discrete(2))
    episode.add_env_reset(observation=_obs(0))
    _call(connector, [episode])
    for t in range(1, steps + 1):
        episode.add_env_step(observation=_obs(t), action=0, reward=0.0)
        _call(connector, [episode])
    return episode


def test_output_space_for_box_ranges() -> None:
    space = _connector().observation_space
    assert set(space.spaces) == {"obs", "opponent_history", "history_mask"}
    assert space["obs"].shape == (2,) and space["opponent_history"].shape == (3, 3)
    assert space["history_mask"].shape == (3,)
    # Zero padding must lie inside the history bounds even if the env's bounds exclude 0.
    shifted = gym.spaces.Box(1.0, 3.0, (5,), np.float32)
    assert _connector(shifted).observation_space["opponent_history"].low.max() == 0.0


def test_output_space_for_dict_keys_and_action_mask() -> None:
    space = gym.spaces.Dict(
        {
            "me": gym.spaces.Box(0, 1, (2, 2), np.float32),
            "them": gym.spaces.Box(0, 1, (3,), np.float32),
            "action_mask": gym.spaces.Box(0, 1, (4,), np.float32),
        }
    )
    connector = OpponentHistory(
        space, None, history=5, obs_split={"self": "me", "opponent": "them"}
    )
    out = connector.observation_space
    assert out["obs"].shape == (4,) and out["opponent_history"].shape == (5, 3)
    assert out["action_mask"].shape == (4,)
    converted = connector.convert_observation(
        {
            "me": np.ones((2, 2)),
            "them": np.array([0.0, 0.5, 1.0]),
            "action_mask": np.array([1, 0, 1, 1]),
        },
        previous=None,
    )
    assert out.contains(converted)


def test_writes_back_rolling_window_and_is_idempotent() -> None:
    connector = _connector()
    episode = _run_episode(connector, steps=4)
    steps = episode.get_observations()  # list of the 5 converted dicts (not numpy'd yet)
    observations = {k: np.stack([o[k] for o in steps]) for k in steps[0]}
    expected_frames, expected_mask = windows_from_sequence(
        np.stack([_obs(t)[2:] for t in range(5)]), 3
    )
    np.testing.assert_array_equal(observations["opponent_history"], expected_frames)
    np.testing.assert_array_equal(observations["history_mask"], expected_mask)
    np.testing.assert_array_equal(observations["obs"][4], _obs(4)[:2])
    assert connector.observation_space.contains(episode.get_observations(-1))
    before = episode.get_observations(-1)["opponent_history"].copy()
    _call(connector, [episode])  # a second call must not push the same frame again
    np.testing.assert_array_equal(episode.get_observations(-1)["opponent_history"], before)


def test_new_episode_starts_a_fresh_window() -> None:
    connector = _connector()
    _run_episode(connector, steps=5)
    fresh = _run_episode(connector, steps=0)
    last = fresh.get_observations(-1)
    assert last["history_mask"].tolist() == [0.0, 0.0, 1.0]
    assert np.all(last["opponent_history"][:2] == 0.0)


def test_window_continues_across_episode_cut() -> None:
    connector = _connector(history=4)
    episode = _run_episode(connector, steps=2)
    successor = episode.cut(len_lookback_buffer=1)
    successor.add_env_step(observation=_obs(3), action=0, reward=0.0)
    _call(connector, [successor])
    last = successor.get_observations(-1)
    np.testing.assert_array_equal(last["opponent_history"][:, 0], [10, 11, 12, 13])
    assert last["history_mask"].tolist() == [1.0, 1.0, 1.0, 1.0]


def test_multi_agent_windows_are_per_agent_and_filtered() -> None:
    spaces = gym.spaces.Dict({"a": BOX, "b": BOX, "c": BOX})
    connector = OpponentHistory(
        spaces, None, history=2, obs_split=SPLIT, multi_agent=True, agent_ids=["a", "b"]
    )
    assert set(connector.observation_space["a"].spaces) == {
        "obs",
        "opponent_history",
        "history_mask",
    }
    assert connector.observation_space["c"] == BOX
    episode = MultiAgentEpisode(observation_space=spaces, action_space=gym.spaces.Dict(
        {aid: gym.spaces.Discrete(2) for aid in "abc"}
    ))  # fmt: skip
    episode.add_env_reset(observations={"a": _obs(0), "b": _obs(100), "c": _obs(7)})
    _call(connector, [episode])
    episode.add_env_step(
        observations={"a": _obs(1), "b": _obs(101), "c": _obs(8)},
        actions={"a": 0, "b": 1, "c": 0},
        rewards={"a": 0.0, "b": 0.0, "c": 0.0},
    )
    _call(connector, [episode])
    a_last = episode.agent_episodes["a"].get_observations(-1)
    b_last = episode.agent_episodes["b"].get_observations(-1)
    np.testing.assert_array_equal(a_last["opponent_history"][:, 0], [10, 11])
    np.testing.assert_array_equal(b_last["opponent_history"][:, 0], [110, 111])
    np.testing.assert_array_equal(episode.agent_episodes["c"].get_observations(-1), _obs(8))


def test_env_runner_windows_match_opponent_moves_across_resets_and_cuts() -> None:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.single_agent_env_runner import SingleAgentEnvRunner

    from rl_platform.modules.transformer_lstm_module import TransformerLSTMModule

    model = {
        "history": 4, "layers": 1, "heads": 1, "d_model": 8, "lstm_cell_size": 8,
        "actor": [8], "critic": [8], "obs_encoder": [8], "max_seq_len": 4, "obs_split": OBS_SPLIT,
    }  # fmt: skip
    config = (
        PPOConfig()
        .environment(RPSHistoryEnv, env_config={"episode_len": 5})
        .env_runners(
            num_env_runners=0,
            num_envs_per_env_runner=2,
            env_to_module_connector=history_connector_for(
                TransformerLSTMModelSpec.from_model_config(model)[0].opponent_history()
            ),
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(module_class=TransformerLSTMModule, model_config=model)
        )
    )
    runner = SingleAgentEnvRunner(config=config)
    chunks = runner.sample(num_timesteps=14) + runner.sample(num_timesteps=10)
    checked = 0
    for chunk in chunks:
        obs = chunk.get_observations()
        infos = chunk.get_infos()
        for t in range(1, len(chunk) + 1):
            # The newest history frame is the opponent move the env just reported.
            move = infos[t]["opponent"]
            assert obs["opponent_history"][t, -1].argmax() == move
            assert obs["history_mask"][t, -1] == 1.0
            checked += 1
        start = chunk.t_started
        assert obs["history_mask"][0].sum() == min(start + 1, 4)
    assert checked >= 20
    assert set(runner.module.observation_space.spaces) == {
        "obs",
        "opponent_history",
        "history_mask",
    }


def test_history_connector_for_signature_and_validation() -> None:
    factory = history_connector_for(OpponentHistoryInputs(frames=7, obs_split=SPLIT))
    piece = factory(None, None, None)  # (env, spaces, device), as AlgorithmConfig calls it
    assert isinstance(piece, OpponentHistory)
    piece.input_observation_space = BOX
    assert piece.observation_space["opponent_history"].shape == (7, 3)
    with pytest.raises(SpecError, match="obs_split is required"):
        history_connector_for(OpponentHistoryInputs(frames=7, obs_split=None))
    with pytest.raises(SpecError, match="obs_split"):
        history_connector_for(OpponentHistoryInputs(frames=90, obs_split={"self": [0, 2]}))
