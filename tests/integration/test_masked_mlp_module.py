"""MaskedMLPModule: RLlib batch contract, masking, APIs, and PPO self-play on connect four.

Module-only tests and the spec-adapter checks need no Ray runtime; the PPO test uses the
`ray_local` fixture (tests/conftest.py) with 0 env runners and a tiny batch.
"""

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis import TARGET_NETWORK_ACTION_DIST_INPUTS
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rl_platform.base.errors import SpecError
from rl_platform.modules.masked_mlp_module import MaskedMLPModule
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.rl_module_spec import module_spec_for
from rl_platform.spec import validate_spec_data
from tests.integration.episode_support import module_episodes

OBS = gym.spaces.Box(0.0, 1.0, (84,), np.float32)
ACTIONS = gym.spaces.Discrete(7)
MASKED = gym.spaces.Dict(
    {"observations": OBS, "action_mask": gym.spaces.Box(0.0, 1.0, (7,), np.float32)}
)
SMALL = {"hidden": [16, 16], "activation": "tanh", "vf_share_layers": False}
C4_MLP = {
    "name": "c4_mlp",
    "env": {"id": "pettingzoo/connect_four_v3"},
    "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
    "model": {"type": "mlp", "hidden": [32, 32]},
    "resources": {"env_runners": 0},
    "logging": {"wandb": "off", "tensorboard": False},
}


def _module(obs_space: gym.Space = MASKED, **kw) -> MaskedMLPModule:
    torch.manual_seed(0)
    spec = RLModuleSpec(
        module_class=MaskedMLPModule,
        observation_space=obs_space,
        action_space=kw.pop("action_space", ACTIONS),
        model_config=kw.pop("model_config", dict(SMALL)),
        **kw,
    )
    return spec.build()


def _masked_batch(batch_size: int) -> tuple[dict, torch.Tensor]:
    mask = (torch.rand(batch_size, 7) > 0.5).float()
    mask[:, 0] = 1.0
    obs = {"observations": torch.rand(batch_size, 84), "action_mask": mask}
    return {Columns.OBS: obs}, mask


def test_every_forward_masks_and_values_have_batch_shape() -> None:
    module = _module()
    torch.nn.init.normal_(module.net.actor.out.weight, std=10.0)
    batch, mask = _masked_batch(32)
    forwards = (module.forward_inference, module.forward_exploration, module.forward_train)
    for forward in forwards:
        logits = forward(batch)[Columns.ACTION_DIST_INPUTS]
        assert logits.shape == (32, 7)
        greedy = module.get_inference_action_dist_cls().from_logits(logits).to_deterministic()
        assert bool((mask.gather(1, greedy.sample().unsqueeze(1)) == 1).all())
    out = module.forward_train(batch)
    values = module.compute_values(batch, embeddings=out[Columns.EMBEDDINGS])
    assert values.shape == (32,)
    torch.testing.assert_close(values, module.compute_values(batch))


def test_box_observations_and_shared_trunk() -> None:
    module = _module(OBS, model_config={**SMALL, "vf_share_layers": True})
    batch = {Columns.OBS: torch.rand(4, 84)}
    assert module.forward_train(batch)[Columns.ACTION_DIST_INPUTS].shape == (4, 7)
    assert module.compute_values(batch).shape == (4,)
    assert module.model_config["hidden"] == [16, 16]


def test_inference_only_drops_the_critic_and_target_network_masks() -> None:
    runner = _module(inference_only=True)
    assert not hasattr(runner, "critic")
    learner = _module()
    learner.make_target_networks()
    batch, mask = _masked_batch(8)
    target = learner.forward_target(batch)[TARGET_NETWORK_ACTION_DIST_INPUTS]
    torch.testing.assert_close(target, learner.forward_train(batch)[Columns.ACTION_DIST_INPUTS])
    assert bool((target[mask == 0] == torch.finfo(target.dtype).min).all())
    # Runner and learner share the policy weights by name (weight sync).
    assert set(runner.state_dict()) <= set(learner.state_dict())


def test_bad_spaces_are_spec_errors() -> None:
    with pytest.raises(SpecError, match="Discrete or MultiDiscrete"):
        _module(action_space=gym.spaces.Box(-1.0, 1.0, (7,), np.float32))
    with pytest.raises(SpecError, match="action_mask has 7 entries"):
        _module(action_space=gym.spaces.Discrete(5))
    with pytest.raises(SpecError, match="flatten_obs"):
        _module(gym.spaces.Dict({"board": OBS}))


def test_spec_adapter_picks_the_module_by_observation_space() -> None:
    assert module_spec_for(validate_spec_data(C4_MLP)).module_class is MaskedMLPModule
    cartpole = {**C4_MLP, "env": {"id": "CartPole-v1"}}
    stock = module_spec_for(validate_spec_data(cartpole))
    assert stock.module_class is None  # RLlib's stock PPO module, unchanged
    assert stock.model_config.fcnet_hiddens == [32, 32]
    dqn = {**C4_MLP, "algo": "DQN", "training": {"train_batch_size": 32}}
    with pytest.raises(SpecError, match=r"model\.type mlp.*DQN"):
        module_spec_for(validate_spec_data(dqn))


def test_ppo_self_play_on_connect_four_with_the_mlp(ray_local) -> None:
    algo = build_algorithm_config(validate_spec_data(C4_MLP)).build_algo()
    try:
        result = algo.train()
        stats = result["learners"]["main"]
        assert np.isfinite(stats["policy_loss"]) and np.isfinite(stats["vf_loss"])
        assert isinstance(algo.env_runner.module["main"], MaskedMLPModule)
        episodes = algo.env_runner.sample(num_timesteps=100, random_actions=False)
        moves = 0
        for episode in episodes:
            for _, agent in module_episodes(episode):
                obs = agent.get_observations(slice(0, len(agent)))
                for mask, action in zip(obs["action_mask"], agent.get_actions(), strict=True):
                    assert mask[action] == 1.0
                    moves += 1
        assert moves > 0
    finally:
        algo.stop()
