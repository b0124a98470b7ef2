"""`TransitionCollector` (rl_platform/sampling/transition_collector.py): rows land in the store
as the envs produced them, episodes are summed, a state taken between episodes continues
exactly in a fresh collector, and one taken mid-episode cuts the episodes in flight. Acting:
`off_policy_acting.py`'s bounds, warm-up and epsilon."""

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


def _cartpole(num_envs: int = 2, seed: int = 0, n_step: int = 1) -> TransitionCollector:
    envs = [gym.make("CartPole-v1") for _ in range(num_envs)]
    store = ReplayStore(
        layout=layout_for(envs[0].observation_space, envs[0].action_space),
        capacity=1000,
        num_envs=num_envs,
        device="cpu",
        n_step=n_step,
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


def _resumed(state: dict, rows: dict, q_net: dict) -> TransitionCollector:
    """A fresh collector (another acting seed) given a saved state: rows first, as the
    off-policy driver restores them (rl_platform/rllib/off_policy.py)."""
    resumed = _cartpole(seed=99, n_step=3)
    resumed.store.load_state_dict(rows)
    resumed.load_state_dict(state)
    resumed.acting.q_net.load_state_dict(q_net)
    return resumed


def test_a_mid_episode_state_cuts_the_episodes_in_flight() -> None:
    first = _cartpole(n_step=3)
    for _ in range(15):
        first.step(random=False)
    while first.needs_reset.any():  # on to a step after which both envs are mid-episode
        first.step(random=False)
    state, rows = first.state_dict(), first.store.state_dict()
    assert state["in_flight"] == [0, 1] and not state["between_episodes"]
    q_net = first.acting.q_net.state_dict()
    resumed, again = _resumed(state, rows, q_net), _resumed(state, rows, q_net)
    store, newest = resumed.store, resumed.store.cursor - 1
    # the episodes in flight end at their last row, marked truncated; nothing else changes
    assert store.truncated[newest].all() and not first.store.truncated[newest].any()
    assert torch.equal(store.truncated[:newest], first.store.truncated[:newest])
    assert torch.equal(store.obs[: store.filled], first.store.obs[: store.filled])
    assert resumed.recent == first.recent and resumed.drain_finished() == 0
    for _ in range(20):
        resumed.step(random=False)
        again.step(random=False)
    # a 3-step window from the row before the cut stops at the cut, and bootstraps from it
    batch = store.gather(torch.tensor([(newest - 1) * 2]), torch.ones(1))
    assert batch.n_steps.item() == 2 and batch.terminated.item() == 0.0
    assert torch.equal(batch.next_obs[0], first.store.next_obs[newest, 0])
    # every env started a new episode; two resumes from one state act and write alike
    assert not torch.equal(store.obs[newest + 1], store.next_obs[newest])
    for name in ("obs", "actions", "rewards", "truncated"):
        assert torch.equal(getattr(store, name), getattr(again.store, name)), name
    assert resumed.recent == again.recent


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
