"""The squashed Gaussian actor and the Q-networks (rl_platform/nets/squashed_gaussian.py,
q_nets.py): log-probabilities against torch's tanh-transformed Normal, bounds, the log-std
clamp, the dueling combination."""

import pytest
import torch
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import TanhTransform

from rl_platform.nets.q_nets import ContinuousQNet, DiscreteQNet
from rl_platform.nets.squashed_gaussian import (
    SquashedGaussianActor,
    greedy_action,
    squashed_sample,
    to_env_bounds,
)


def test_the_log_probability_is_the_tanh_normals():
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(64, 6, generator=generator).clamp(-1.5, 1.5)
    noise = torch.randn(64, 3, generator=generator)
    actions, logp = squashed_sample(inputs, noise)
    mean, log_std = (x.double() for x in inputs.chunk(2, dim=-1))
    unsquashed = mean + noise.double() * log_std.exp()
    torch.testing.assert_close(actions.double(), torch.tanh(unsquashed), atol=1e-6, rtol=0)
    # log N(u) - log(1 - tanh(u)^2), in float64: the change of variables of SAC's appendix C.
    normal = Normal(mean, log_std.exp()).log_prob(unsquashed)
    expected = (normal - torch.log1p(-(torch.tanh(unsquashed) ** 2))).sum(-1)
    torch.testing.assert_close(logp.double(), expected, atol=1e-4, rtol=1e-5)
    # And torch's own tanh-transformed Normal, where atanh is still well conditioned.
    inner = unsquashed.abs().amax(-1) < 2
    reference = TransformedDistribution(Normal(mean, log_std.exp()), [TanhTransform()])
    torch.testing.assert_close(
        logp.double()[inner],
        reference.log_prob(torch.tanh(unsquashed)).sum(-1)[inner],
        atol=1e-4,
        rtol=1e-5,
    )


def test_the_log_std_is_clamped_to_rllibs_range():
    inputs = torch.tensor([[0.0, 10.0], [0.0, -10.0]])
    noise = torch.ones(2, 1)
    actions, _ = squashed_sample(inputs, noise)
    # std exp(2) and exp(-5), RLlib's MAX_LOG_NN_OUTPUT and MIN_LOG_NN_OUTPUT.
    torch.testing.assert_close(
        actions[:, 0], torch.tanh(torch.tensor([2.0, -5.0]).exp()), atol=1e-6, rtol=0
    )


def test_actions_stay_in_bounds_and_scale_to_the_envs():
    actions, logp = squashed_sample(torch.tensor([[50.0, 0.0], [-50.0, 0.0]]), torch.zeros(2, 1))
    assert actions[:, 0].tolist() == [1.0, -1.0]
    assert bool(torch.isfinite(logp).all())  # the stable Jacobian at saturation
    low, high = torch.tensor([-2.0]), torch.tensor([6.0])
    bounded = to_env_bounds(torch.tensor([[-1.0], [0.0], [1.0], [1.5]]), low, high)
    assert bounded[:, 0].tolist() == [-2.0, 2.0, 6.0, 6.0]
    assert greedy_action(torch.tensor([[0.5, -3.0]]))[0].tolist() == pytest.approx([0.4621171])


def test_the_actor_samples_with_its_generator():
    actor = SquashedGaussianActor(4, 2, [8])
    obs = torch.randn(5, 4)
    first = actor.sample(obs, generator=torch.Generator().manual_seed(3))
    again = actor.sample(obs, generator=torch.Generator().manual_seed(3))
    assert first[0].shape == (5, 2) and first[1].shape == (5,)
    torch.testing.assert_close(first, again, rtol=0, atol=0)


def test_q_net_shapes_and_the_dueling_combination():
    assert ContinuousQNet(4, 2, [8])(torch.zeros(5, 4), torch.zeros(5, 2)).shape == (5,)
    net = DiscreteQNet(4, 3, [8], dueling=True)
    obs = torch.randn(5, 4)
    features = net.trunk(obs)
    advantages, value = net.advantage(features), net.value(features)
    expected = value + advantages - advantages.mean(-1, keepdim=True)
    torch.testing.assert_close(net(obs), expected)
    assert DiscreteQNet(4, 3, [8], dueling=False).value is None
