"""`TransitionCollector` (rl_platform/sampling/transition_collector.py): rows land in the store
as the envs produced them, episodes are summed, and a state taken between episodes continues
exactly in a fresh collector. Acting: `off_policy_acting.py`'s bounds, warm-up and epsilon."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from rl_platform.nets.q_nets import DiscreteQNet
from rl_platform.nets.squashed_gaussian import SquashedGaussianActor
from rl_platform.replay.layout import layout_for
from rl_platform.replay.store import ReplayStore
from rl_platform.sampling.off_policy_acting import DQNActing, SACActing, epsilon_at
from rl_platform.sampling.transition_collector import TransitionCollector


def _cartpole(num_envs: int = 2, seed: int = 0) -> TransitionCollector:
    envs = [gym.make("CartPole-v1") for _ in range(num_envs)]
    store = ReplayStore(
        layout=layout_for(envs[0].observation_space, envs[0].action_space),
        capacity=1000,
        num_envs=num_envs,
        device="cpu",
    )
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(seed)
    acting = DQNActing(DiscreteQNet(4, 2, [8], dueling=True), num_actions=2, generator=generator)
    return TransitionCollector(envs=envs, store=store, acting=acting, seeds=[10, 11])


def test_rows_follow_the_envs_and_episodes_are_summed() -> None:
    collector = _cartpole()
    for _ in range(60):
        collector.step(random=True)
    store = collector.store
    assert store.size == 120
    # Within an episode, a row's next_obs is the next row's obs; an ended row keeps its final obs.
    ends = (store.terminated | store.truncated)[:59]
    same = (store.next_obs[:59] == store.obs[1:60]).all(dim=-1)
    assert torch.equal(same, ~ends)
    episodes = int(ends.sum()) + int((store.terminated | store.truncated)[59].sum())
    assert collector.drain_finished() == episodes and collector.drain_finished() == 0
    mean_return, mean_length = collector.episode_means()
    assert mean_return == mean_length  # CartPole pays 1 per step


def test_a_state_between_episodes_continues_exactly() -> None:
    first = _cartpole(num_envs=1)
    for _ in range(40):
        first.step(random=False)
    while not first.needs_reset.all():  # on to the end of an episode
        first.step(random=False)
    state = first.state_dict()
    assert state["between_episodes"]
    resumed = _cartpole(
        num_envs=1, seed=99
    )  # another acting seed: the state must bring the right one
    resumed.load_state_dict(state)
    resumed.acting.q_net.load_state_dict(first.acting.q_net.state_dict())
    for _ in range(30):
        first.step(random=False)
        resumed.step(random=False)
    np.testing.assert_array_equal(first.obs, resumed.obs)
    assert first.recent == resumed.recent


def test_sac_acting_scales_to_the_env_bounds_and_warms_up_uniformly() -> None:
    torch.manual_seed(0)
    actor = SquashedGaussianActor(3, 2, [8])
    acting = SACActing(actor, low=[-2.0, 0.0], high=[2.0, 1.0], generator=torch.Generator())
    stored, to_env = acting.random(500)
    assert stored.abs().max() <= 1.0 and stored.min() < -0.9 and stored.max() > 0.9
    np.testing.assert_allclose(to_env[:, 0], 2.0 * stored[:, 0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(to_env[:, 1], (stored[:, 1].numpy() + 1) / 2, rtol=1e-6)
    stored, to_env = acting.act(torch.zeros(4, 3))
    assert stored.shape == (4, 2) and to_env.dtype == np.float32


@pytest.mark.parametrize(
    ("steps", "epsilon"), [(0, 1.0), (5000, 0.51), (10_000, 0.02), (50_000, 0.02)]
)
def test_epsilon_follows_rllibs_schedule(steps, epsilon) -> None:
    assert epsilon_at(steps, timesteps=10_000, final=0.02) == pytest.approx(epsilon)


def test_greedy_dqn_acting_takes_the_argmax() -> None:
    torch.manual_seed(0)
    q_net = DiscreteQNet(4, 3, [8], dueling=False)
    acting = DQNActing(q_net, num_actions=3, generator=torch.Generator())
    acting.epsilon = 0.0
    obs = torch.randn(16, 4)
    stored, to_env = acting.act(obs)
    assert torch.equal(stored, q_net(obs).argmax(-1)) and to_env.dtype == np.int64
