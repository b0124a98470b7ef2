"""TransformerLSTMModule: connector batch contract, state, masking, checkpoints, PPO.

Module-only tests need no Ray runtime; the PPO smoke test uses the `ray_local` fixture.
"""

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec

from rl_platform.base.errors import SpecError
from rl_platform.connectors.opponent_history import OpponentHistory
from rl_platform.envs.rps_history import OBS_SPLIT, RPSHistoryEnv
from rl_platform.modules import history_connector_for
from rl_platform.modules.transformer_lstm_module import TransformerLSTMModule
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec
from rl_platform.utils.user_code import load_entry_point

SMALL = {
    "history": 5, "layers": 2, "heads": 2, "d_model": 16, "lstm_cell_size": 12,
    "actor": [8], "critic": [8], "obs_encoder": [8], "max_seq_len": 4,
    "obs_split": {"self": [0, 3], "opponent": [3, 7]},
}  # fmt: skip
RAW = gym.spaces.Box(-1.0, 1.0, (7,), np.float32)
ACTION_SPACES = [
    gym.spaces.Discrete(3),
    gym.spaces.MultiDiscrete([2, 3]),
    gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
]


def _obs_space(raw: gym.Space = RAW) -> gym.Space:
    return OpponentHistory(raw, None, history=5, obs_split=SMALL["obs_split"]).observation_space


def _module(action_space: gym.Space = ACTION_SPACES[0], obs_space: gym.Space | None = None):
    torch.manual_seed(0)
    return TransformerLSTMModule(
        observation_space=obs_space or _obs_space(),
        action_space=action_space,
        model_config=dict(SMALL),
    )


def _obs(b: int, t: int) -> dict[str, torch.Tensor]:
    mask = torch.ones(b, t, 5)
    mask[:, 0, :3] = 0.0  # episode start: only the newest slots are real
    return {
        "obs": torch.randn(b, t, 3),
        "opponent_history": torch.randn(b, t, 5, 4) * mask.unsqueeze(-1),
        "history_mask": mask,
    }


def _batch(module: RLModule, obs: dict, b: int) -> dict:
    state = {
        k: torch.from_numpy(v).expand(b, *v.shape).clone()
        for k, v in module.get_initial_state().items()
    }
    return {Columns.OBS: obs, Columns.STATE_IN: state}


def test_requires_the_connector_observation_space() -> None:
    assert load_entry_point(TransformerLSTMModelSpec.rl_module, label="") is TransformerLSTMModule
    with pytest.raises(SpecError, match="OpponentHistory"):
        _module(obs_space=RAW)
    other_history = OpponentHistory(RAW, None, history=3, obs_split=SMALL["obs_split"])
    with pytest.raises(SpecError, match="history=5"):
        _module(obs_space=other_history.observation_space)


@pytest.mark.parametrize("space", ACTION_SPACES, ids=lambda s: type(s).__name__)
def test_shapes_for_each_action_space(space: gym.Space) -> None:
    module = _module(space)
    batch = _batch(module, _obs(3, 4), 3)
    out = module.forward_train(batch)
    dist = module.get_train_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    assert dist.logp(dist.sample()).shape == (3, 4)
    assert out[Columns.STATE_OUT]["h"].shape == (3, 12)
    assert module.compute_values(batch).shape == (3, 4)


def test_stepping_one_at_a_time_equals_sequence_forward() -> None:
    module = _module()
    obs = _obs(2, 4)
    full = module.forward_train(_batch(module, obs, 2))
    step_batch = _batch(module, None, 2)
    logits, values = [], []
    for t in range(4):
        step_batch[Columns.OBS] = {k: v[:, t : t + 1] for k, v in obs.items()}
        out = module.forward_inference(step_batch)
        logits.append(out[Columns.ACTION_DIST_INPUTS])
        values.append(module.compute_values(step_batch))
        step_batch[Columns.STATE_IN] = out[Columns.STATE_OUT]
    torch.testing.assert_close(torch.cat(logits, 1), full[Columns.ACTION_DIST_INPUTS])
    torch.testing.assert_close(torch.cat(values, 1), module.compute_values(_batch(module, obs, 2)))
    torch.testing.assert_close(step_batch[Columns.STATE_IN]["h"], full[Columns.STATE_OUT]["h"])


def test_masked_actions_are_never_sampled() -> None:
    raw = gym.spaces.Dict(
        {"observations": RAW, "action_mask": gym.spaces.Box(0.0, 1.0, (3,), np.float32)}
    )
    module = _module(obs_space=_obs_space(raw))
    n = 2000
    obs = {**_obs(n, 1), "action_mask": torch.tensor([0.0, 1.0, 0.0]).expand(n, 1, 3)}
    out = module.forward_exploration(_batch(module, obs, n))
    dist = module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    assert set(dist.sample().flatten().tolist()) == {1}


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path) -> None:
    module = _module(ACTION_SPACES[2])
    batch = _batch(module, _obs(2, 3), 2)
    expected = module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
    module.save_to_path(tmp_path / "module")
    restored = RLModule.from_checkpoint(tmp_path / "module")
    torch.testing.assert_close(restored.forward_train(batch)[Columns.ACTION_DIST_INPUTS], expected)
    torch.testing.assert_close(restored.compute_values(batch), module.compute_values(batch))


def test_ppo_iteration_with_history_connector(ray_local) -> None:
    from ray.rllib.algorithms.ppo import PPOConfig

    model = {**SMALL, "obs_split": OBS_SPLIT}
    config = (
        PPOConfig()
        .environment(RPSHistoryEnv, env_config={"episode_len": 6})
        # One remote env runner: the connector factory, connector and module must pickle.
        .env_runners(
            num_env_runners=1,
            num_envs_per_env_runner=2,
            env_to_module_connector=history_connector_for(
                TransformerLSTMModelSpec.from_model_config(model)[0].opponent_history()
            ),
        )
        .rl_module(
            rl_module_spec=RLModuleSpec(module_class=TransformerLSTMModule, model_config=model)
        )
        .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
    )
    algo = config.build_algo()
    try:
        result = algo.train()
        learner = result["learners"]["default_policy"]
        assert np.isfinite(learner["total_loss"])
        assert set(algo.get_module().observation_space.spaces) == {
            "obs",
            "opponent_history",
            "history_mask",
        }
    finally:
        algo.stop()


STREAMING = {**SMALL, "encoder": "streaming"}


def _streaming_module() -> TransformerLSTMModule:
    torch.manual_seed(0)
    connector = OpponentHistory(RAW, None, history=1, obs_split=SMALL["obs_split"])
    return TransformerLSTMModule(
        observation_space=connector.observation_space,
        action_space=ACTION_SPACES[0],
        model_config=dict(STREAMING),
    )


def test_streaming_module_acts_step_by_step_as_it_trains_on_the_chunk() -> None:
    """The key/value cache rides in STATE_IN/STATE_OUT like the LSTM state."""
    module = _streaming_module()
    with pytest.raises(SpecError, match="reads 1 frame"):
        TransformerLSTMModule(
            observation_space=_obs_space(), action_space=ACTION_SPACES[0], model_config=STREAMING
        )
    assert module.get_initial_state()["kv_3"].shape == (2, 2, 4, 8)
    obs = {
        "obs": torch.randn(2, 7, 3),
        "opponent_history": torch.randn(2, 7, 1, 4),
        "history_mask": torch.ones(2, 7, 1),
    }
    full = module.forward_train(_batch(module, obs, 2))
    step_batch = _batch(module, None, 2)
    logits = []
    for t in range(7):
        step_batch[Columns.OBS] = {k: v[:, t : t + 1] for k, v in obs.items()}
        out = module.forward_exploration(step_batch)
        logits.append(out[Columns.ACTION_DIST_INPUTS])
        step_batch[Columns.STATE_IN] = out[Columns.STATE_OUT]
    tol = {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(torch.cat(logits, 1), full[Columns.ACTION_DIST_INPUTS], **tol)
    for key in ("h", "kv_0", "kv_3", "kv_valid", "position"):
        torch.testing.assert_close(step_batch[Columns.STATE_IN][key], full[Columns.STATE_OUT][key])


def _rps_algorithm(name: str, model: dict):
    """PPO on the RPS history env built through the spec path (platform learner, connector)."""
    from rl_platform.rllib.config import build_algorithm_config
    from rl_platform.spec import validate_spec_data

    spec = validate_spec_data(
        {
            "name": name,
            "algo": "PPO",
            "seed": 0,
            "env": {"id": "rlp/RPSHistory-v0", "kwargs": {"episode_len": 10}},
            "training": {"train_batch_size": 80, "minibatch_size": 40, "num_epochs": 2},
            "model": {"type": "transformer_lstm", **model, "obs_split": OBS_SPLIT},
        }
    )
    return build_algorithm_config(spec).build_algo()


def test_streaming_encoder_trains_through_the_spec_path(ray_local) -> None:
    algo = _rps_algorithm("rps_streaming", STREAMING)
    try:
        results = [algo.train() for _ in range(2)]
        module = algo.get_module()
    finally:
        algo.stop()
    assert all(np.isfinite(r["learners"]["default_policy"]["total_loss"]) for r in results)
    assert module.observation_space["opponent_history"].shape == (1, 3)
    assert module.get_initial_state()["kv_3"].shape == (2, 2, 4, 8)


def test_opponent_prediction_trains_through_the_spec_path(ray_local) -> None:
    """The auxiliary head (model.opponent_prediction) is trained and its loss logged."""
    model = {**STREAMING, "critic_input": "observation", "lstm_skip": True}
    algo = _rps_algorithm("rps_opponent_prediction", {**model, "opponent_prediction": 1.0})
    try:
        before = algo.get_module().net.opponent_head.weight.detach().clone()
        learner = algo.train()["learners"]["default_policy"]
        after = algo.get_module().net.opponent_head.weight.detach()
    finally:
        algo.stop()
    loss = learner["loss/opponent_prediction"]
    assert np.isfinite(loss) and loss > 0
    assert not torch.allclose(before, after)
