"""MaskedMLPNet (plain torch) and the mlp model config / layout checks; no Ray import."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from rl_platform.base.errors import SpecError
from rl_platform.modules import is_action_mask_space, mlp_module_class_for
from rl_platform.nets.blocks import apply_action_mask
from rl_platform.nets.masked_mlp_net import MaskedMLPNet
from rl_platform.spec.model_types.mlp import MLPModelSpec

OBS_SHAPE = (6, 7, 2)
ACTIONS = gym.spaces.Discrete(7)
BOX = gym.spaces.Box(0.0, 1.0, (84,), np.float32)
MASKED = gym.spaces.Dict(
    {"observations": BOX, "action_mask": gym.spaces.Box(0.0, 1.0, (7,), np.float32)}
)


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def _net(*, shared: bool = False, action_space: gym.Space = ACTIONS) -> MaskedMLPNet:
    config = MLPModelSpec(hidden=(32, 32), activation="tanh", vf_share_layers=shared)
    return MaskedMLPNet(obs_shape=OBS_SHAPE, action_space=action_space, config=config)


def _mask(batch: int, actions: int = 7) -> torch.Tensor:
    mask = (torch.rand(batch, actions) > 0.5).float()
    mask[:, 3] = 1.0  # at least one legal action per row
    return mask


@pytest.mark.parametrize("shared", [False, True], ids=["separate", "shared"])
def test_masked_logits_never_pick_illegal_actions(shared: bool) -> None:
    net = _net(shared=shared)
    obs, mask = torch.randn(64, *OBS_SHAPE), _mask(64)
    # Large weights so the unmasked argmax often lands on an illegal action.
    torch.nn.init.normal_(net.actor.out.weight, std=10.0)
    logits = net.policy(obs, mask)
    assert logits.shape == (64, 7)
    assert torch.isfinite(logits).all()
    assert bool((mask.gather(1, logits.argmax(-1, keepdim=True)) == 1).all())
    samples = torch.distributions.Categorical(logits=logits).sample((50,))
    assert bool((mask.gather(1, samples.T) == 1).all())
    assert bool((mask.gather(1, net.policy(obs, None).argmax(-1, keepdim=True)) == 0).any())


@pytest.mark.parametrize("shared", [False, True], ids=["separate", "shared"])
def test_values_shape_and_one_pass_for_the_loss(shared: bool) -> None:
    net = _net(shared=shared)
    obs, mask = torch.randn(5, *OBS_SHAPE), _mask(5)
    logits, embeddings = net.forward_train(obs, mask)
    values = net.critic(embeddings)
    assert values.shape == (5,)
    torch.testing.assert_close(logits, net.policy(obs, mask))
    torch.testing.assert_close(values, net.critic(net.embed(obs)))
    # Leading batch and time dims are both kept.
    assert net.critic(net.embed(torch.randn(2, 3, *OBS_SHAPE))).shape == (2, 3)


def test_no_gradient_flows_to_masked_logits() -> None:
    net = _net()
    obs, mask = torch.randn(8, *OBS_SHAPE), _mask(8)
    raw = net.actor(net.trunk(net.flatten(obs)))
    raw.retain_grad()
    logits = apply_action_mask(raw, mask)
    dist = torch.distributions.Categorical(logits=logits)
    loss = -(dist.log_prob(torch.full((8,), 3)) + 0.01 * dist.entropy()).sum()
    loss.backward()
    assert torch.isfinite(raw.grad).all()
    assert bool((raw.grad[mask == 0] == 0).all())
    assert bool((raw.grad[mask == 1] != 0).any())


def test_shared_trunk_and_separate_critic_layout() -> None:
    separate, shared = _net(), _net(shared=True)
    assert separate.critic.mlp.out_dim == 32  # its own `hidden` MLP on the raw observation
    assert len(shared.critic.mlp.layers) == 0  # a linear value head on the shared trunk
    grads = torch.autograd.grad(
        separate.critic(separate.embed(torch.randn(3, *OBS_SHAPE))).sum(),
        list(separate.trunk.parameters()),
        allow_unused=True,
    )
    assert all(g is None for g in grads)  # value loss does not train the actor trunk


def test_multidiscrete_masks_cover_concatenated_logits() -> None:
    net = _net(action_space=gym.spaces.MultiDiscrete([3, 4]))
    mask = torch.ones(2, 7)
    mask[:, 1] = 0.0
    logits = net.policy(torch.randn(2, *OBS_SHAPE), mask)
    assert logits.shape == (2, 7)
    assert bool((logits[:, 1] == torch.finfo(logits.dtype).min).all())


def test_mlp_config_matches_the_spec_keys() -> None:
    config, unknown = MLPModelSpec.from_model_config(
        {"hidden": [16], "activation": "relu", "vf_share_layers": True, "fcnet_hiddens": [1]}
    )
    assert config == MLPModelSpec(hidden=(16,), activation="relu", vf_share_layers=True)
    assert unknown == ["fcnet_hiddens"]
    assert MLPModelSpec.from_model_config({"hidden": []})[0].hidden == []
    assert MLPModelSpec.from_model_config(None)[0] == MLPModelSpec()
    with pytest.raises(SpecError, match="vf_share_layers"):
        MLPModelSpec.from_model_config({"vf_share_layers": "yes"})
    with pytest.raises(SpecError, match="hidden"):
        MLPModelSpec.from_model_config({"hidden": [0]})


def test_mlp_module_choice_by_observation_space() -> None:
    assert is_action_mask_space(MASKED)
    assert not is_action_mask_space(BOX)
    assert mlp_module_class_for([BOX, BOX]) is None  # RLlib's stock module, as before
    other = gym.spaces.Dict({"board": BOX, "legal": MASKED["action_mask"]})
    with pytest.raises(SpecError, match=r"model\.type mlp.*flatten_obs"):
        mlp_module_class_for([other])
