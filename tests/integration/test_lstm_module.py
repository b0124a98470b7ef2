"""LSTMActorCriticModule: RLlib batch contract, state, masking, checkpoints, algorithms.

Module-only tests need no Ray runtime; the algorithm smoke tests use the `ray_local` fixture.
"""

import time

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import TARGET_NETWORK_ACTION_DIST_INPUTS
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec

from rl_platform.base.errors import SpecError
from rl_platform.modules.lstm_module import LSTMActorCriticModule
from rl_platform.spec.model import MODEL_TYPES
from rl_platform.utils.user_code import load_entry_point

SMALL = {"encoder": [8], "lstm_cell_size": 12, "actor": [8], "critic": [8], "max_seq_len": 4}
OBS = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
ACTION_SPACES = [
    gym.spaces.Discrete(3),
    gym.spaces.MultiDiscrete([2, 3]),
    gym.spaces.Box(-1.0, 1.0, (2,), np.float32),
]


def _module(action_space: gym.Space = ACTION_SPACES[0], obs_space: gym.Space = OBS, **kw):
    torch.manual_seed(0)
    return LSTMActorCriticModule(
        observation_space=obs_space, action_space=action_space, model_config=dict(SMALL), **kw
    )


def _state(module: RLModule, batch_size: int) -> dict[str, torch.Tensor]:
    return {
        k: torch.from_numpy(v).unsqueeze(0).repeat(batch_size, 1)
        for k, v in module.get_initial_state().items()
    }


def _batch(module: RLModule, obs, batch_size: int) -> dict:
    return {Columns.OBS: obs, Columns.STATE_IN: _state(module, batch_size)}


def test_the_model_type_names_the_module_and_defaults_are_written_back() -> None:
    assert load_entry_point(MODEL_TYPES["lstm"].rl_module, label="") is LSTMActorCriticModule
    module = LSTMActorCriticModule(
        observation_space=OBS, action_space=ACTION_SPACES[0], model_config={}
    )
    assert module.model_config["max_seq_len"] == 32  # RLlib's time-dim connector reads it
    assert module.model_config["lstm_cell_size"] == 512
    assert module.get_initial_state()["h"].shape == (512,)
    assert module.is_stateful()


@pytest.mark.parametrize("space", ACTION_SPACES, ids=lambda s: type(s).__name__)
def test_shapes_and_sampling_for_each_action_space(space: gym.Space) -> None:
    module = _module(space)
    batch = _batch(module, torch.randn(3, 5, 4), 3)
    for out in (module.forward_inference(batch), module.forward_train(batch)):
        assert out[Columns.STATE_OUT]["h"].shape == (3, 12)
    out = module.forward_train(batch)
    dist = module.get_train_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
    actions = dist.sample()
    assert actions.shape[:2] == (3, 5)
    assert dist.logp(actions).shape == (3, 5)
    assert module.compute_values(batch).shape == (3, 5)
    torch.testing.assert_close(
        module.compute_values(batch, out[Columns.EMBEDDINGS]), module.compute_values(batch)
    )


def test_stepping_one_at_a_time_equals_sequence_forward() -> None:
    module = _module(ACTION_SPACES[2])
    obs = torch.randn(2, 6, 4)
    full = module.forward_train(_batch(module, obs, 2))
    state, logits = _state(module, 2), []
    for t in range(6):
        out = module.forward_inference({Columns.OBS: obs[:, t : t + 1], Columns.STATE_IN: state})
        state = out[Columns.STATE_OUT]
        logits.append(out[Columns.ACTION_DIST_INPUTS])
    torch.testing.assert_close(torch.cat(logits, 1), full[Columns.ACTION_DIST_INPUTS])
    torch.testing.assert_close(state["c"], full[Columns.STATE_OUT]["c"])


def test_zero_padded_chunks_with_seq_lens() -> None:
    module = _module()
    obs = torch.randn(2, 4, 4)
    obs[1, 2:] = 0.0
    batch = {**_batch(module, obs, 2), Columns.SEQ_LENS: torch.tensor([4, 2])}
    out = module.forward_train(batch)
    short = module.forward_train(_batch(module, obs[1:, :2], 1))
    torch.testing.assert_close(
        out[Columns.ACTION_DIST_INPUTS][1:, :2], short[Columns.ACTION_DIST_INPUTS]
    )
    torch.testing.assert_close(out[Columns.STATE_OUT]["h"][1:], short[Columns.STATE_OUT]["h"])


@pytest.mark.parametrize(
    ("space", "mask"),
    [
        (gym.spaces.Discrete(4), [1, 0, 0, 1]),
        (gym.spaces.MultiDiscrete([2, 3]), [0, 1, 1, 0, 1]),
    ],
    ids=["Discrete", "MultiDiscrete"],
)
def test_masked_actions_are_never_sampled(space: gym.Space, mask: list[int]) -> None:
    obs_space = gym.spaces.Dict(
        {
            "observations": OBS,
            "action_mask": gym.spaces.Box(0.0, 1.0, (len(mask),), np.float32),
        }
    )
    module = _module(space, obs_space)
    n = 2000
    obs = {
        "observations": torch.randn(n, 1, 4),
        "action_mask": torch.tensor(mask, dtype=torch.float32).expand(n, 1, -1),
    }
    out = module.forward_exploration(_batch(module, obs, n))
    actions = (
        module.get_exploration_action_dist_cls()
        .from_logits(out[Columns.ACTION_DIST_INPUTS])
        .sample()
    )
    allowed = np.flatnonzero(mask)
    if isinstance(space, gym.spaces.Discrete):
        assert set(actions.flatten().tolist()) == set(allowed.tolist())
    else:
        assert set(actions[..., 0].flatten().tolist()) == {1}
        assert set(actions[..., 1].flatten().tolist()) == {0, 2}
    # compute_values must not consume the mask from the batch (GAE reuses the batch).
    module.compute_values(_batch(module, obs, n))
    assert "action_mask" in obs


def test_action_mask_with_box_actions_is_rejected() -> None:
    obs_space = gym.spaces.Dict(
        {"observations": OBS, "action_mask": gym.spaces.Box(0.0, 1.0, (2,), np.float32)}
    )
    with pytest.raises(SpecError, match="action_mask"):
        _module(ACTION_SPACES[2], obs_space)


def test_checkpoint_round_trip_gives_identical_outputs(tmp_path) -> None:
    module = _module(ACTION_SPACES[1])
    batch = _batch(module, torch.randn(2, 3, 4), 2)
    expected = module.forward_train(batch)
    module.save_to_path(tmp_path / "module")
    restored = RLModule.from_checkpoint(tmp_path / "module")
    assert isinstance(restored, LSTMActorCriticModule)
    got = restored.forward_train(batch)
    torch.testing.assert_close(
        got[Columns.ACTION_DIST_INPUTS], expected[Columns.ACTION_DIST_INPUTS]
    )
    torch.testing.assert_close(restored.compute_values(batch), module.compute_values(batch))
    # get_state / set_state into a differently initialised module.
    torch.manual_seed(123)
    other = LSTMActorCriticModule(
        observation_space=OBS, action_space=ACTION_SPACES[1], model_config=dict(SMALL)
    )
    assert not torch.allclose(
        other.forward_train(batch)[Columns.ACTION_DIST_INPUTS],
        expected[Columns.ACTION_DIST_INPUTS],
    )
    other.set_state(module.get_state())
    torch.testing.assert_close(
        other.forward_train(batch)[Columns.ACTION_DIST_INPUTS], expected[Columns.ACTION_DIST_INPUTS]
    )


def test_inference_only_module_and_target_network() -> None:
    learner_module = _module()
    learner_module.make_target_networks()
    batch = _batch(learner_module, torch.randn(2, 3, 4), 2)
    target = learner_module.forward_target(batch)[TARGET_NETWORK_ACTION_DIST_INPUTS]
    torch.testing.assert_close(
        target, learner_module.forward_train(batch)[Columns.ACTION_DIST_INPUTS]
    )
    assert learner_module.get_target_network_pairs()[0][0] is learner_module.net

    runner_module = _module(inference_only=True)
    assert not hasattr(runner_module, "critic")
    state = learner_module.get_state(inference_only=True)
    assert not any(k.startswith(("critic", "_target_net")) for k in state)
    runner_module.set_state(state)
    torch.testing.assert_close(
        runner_module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS],
        learner_module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS],
    )


def _algo_config(algo: str):
    from ray.rllib.algorithms.appo import APPOConfig
    from ray.rllib.algorithms.impala import IMPALAConfig
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.examples.envs.classes.stateless_cartpole import StatelessCartPole

    config_cls = {"PPO": PPOConfig, "APPO": APPOConfig, "IMPALA": IMPALAConfig}[algo]
    config = (
        config_cls()
        .environment(StatelessCartPole)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=2, rollout_fragment_length=16)
        .rl_module(
            rl_module_spec=RLModuleSpec(module_class=LSTMActorCriticModule, model_config=SMALL)
        )
        .training(train_batch_size_per_learner=64)
    )
    if algo == "PPO":
        config = config.training(minibatch_size=32, num_epochs=1)
    return config


@pytest.mark.parametrize("algo", ["PPO", "APPO", "IMPALA"])
def test_training_updates_per_algorithm(ray_local, algo: str) -> None:
    # IMPALA/APPO learn asynchronously (and default to >= 10 s per iteration): iterate with
    # no minimum time until the learner reports a loss. The learner thread's first update can
    # take many quick iterations on a busy machine (the suite's background scenarios share the
    # cores), so the loop polls to a deadline rather than a count.
    algo_obj = _algo_config(algo).reporting(min_time_s_per_iteration=0).build_algo()
    try:
        losses = []
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            result = algo_obj.train()
            learner = result.get("learners", {}).get("default_policy", {})
            losses = [v for k, v in learner.items() if k in ("total_loss", "policy_loss")]
            if losses:
                break
        assert losses and all(np.isfinite(v) for v in losses)
        assert isinstance(algo_obj.get_module(), LSTMActorCriticModule)
    finally:
        algo_obj.stop()


def test_multi_agent_ppo_iteration(ray_local) -> None:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.examples.envs.classes.multi_agent import MultiAgentStatelessCartPole

    spec = RLModuleSpec(module_class=LSTMActorCriticModule, model_config=SMALL)
    config = (
        PPOConfig()
        .environment(MultiAgentStatelessCartPole, env_config={"num_agents": 2})
        .env_runners(num_env_runners=0, rollout_fragment_length=32)
        .multi_agent(policies={"p0", "p1"}, policy_mapping_fn=lambda aid, *a, **k: f"p{aid}")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={"p0": spec, "p1": spec}))
        .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
    )
    algo = config.build_algo()
    try:
        result = algo.train()
        assert set(result["learners"]) >= {"p0", "p1"}
        assert isinstance(algo.get_module("p1"), LSTMActorCriticModule)
    finally:
        algo.stop()
