"""The SAC and DQN update steps (rl_platform/learners/sac_step.py, dqn_step.py) on tiny nets:
each term's gradient on its own parameters, Adam as torch's, Polyak targets, metrics read
once, a non-finite batch refused, and no host read anywhere in sample -> step -> priorities."""

import copy

import gymnasium as gym
import pytest
import torch

from rl_platform.learners import HEALTH_NONFINITE_KEY
from rl_platform.learners.dqn_step import DQNSettings, DQNStep
from rl_platform.learners.metric_sums import MetricSums
from rl_platform.learners.polyak import TargetPair
from rl_platform.learners.sac_step import SACSettings, SACStep, make_sac_nets
from rl_platform.nets.q_nets import DiscreteQNet
from rl_platform.replay.layout import layout_for
from rl_platform.replay.store import ReplayStore
from tests.unit.host_reads_support import host_reads_refused

OBS_DIM, ACTION_DIM, NUM_ENVS = 3, 2, 4


def _store(action_space: gym.Space, *, replay: str = "prioritized") -> ReplayStore:
    layout = layout_for(gym.spaces.Box(-1.0, 1.0, (OBS_DIM,)), action_space)
    store = ReplayStore(
        layout=layout, capacity=64, num_envs=NUM_ENVS, device="cpu", replay=replay, n_step=2
    )
    generator = torch.Generator().manual_seed(0)
    for step in range(10):
        obs = torch.randn(NUM_ENVS, OBS_DIM, generator=generator)
        if isinstance(action_space, gym.spaces.Box):
            actions = torch.rand(NUM_ENVS, ACTION_DIM, generator=generator) * 2 - 1
        else:
            actions = torch.randint(action_space.n, (NUM_ENVS,), generator=generator)
        store.add(
            obs=obs,
            actions=actions,
            rewards=torch.randn(NUM_ENVS, generator=generator),
            next_obs=obs + 0.1,
            terminated=torch.tensor([step == 4, False, False, step == 8]),
            truncated=torch.tensor([False, step == 6, False, False]),
        )
    return store


def _sac(seed: int = 0, **settings) -> SACStep:
    torch.manual_seed(seed)
    nets = make_sac_nets(obs_dim=OBS_DIM, action_dim=ACTION_DIM, hidden=[16, 16])
    return SACStep(nets, SACSettings(**settings), generator=torch.Generator().manual_seed(1))


def _params(*modules) -> list[torch.Tensor]:
    return [p.detach().clone() for m in modules for p in m.parameters()]


def test_each_sac_term_moves_only_its_own_parameters():
    step = _sac()
    batch = _store(gym.spaces.Box(-1, 1, (ACTION_DIM,))).sample(32)
    nets = step.nets
    groups = {
        "loss_critic": list(nets.critics[0].parameters()),
        "loss_critic_twin": list(nets.critics[1].parameters()),
        "loss_actor": list(nets.actor.parameters()),
        "loss_alpha": [nets.log_alpha],
    }
    everything = [p for params in groups.values() for p in params]
    step.generator.manual_seed(7)
    terms = step.loss_terms(batch)
    total = torch.autograd.grad(sum(terms[k] for k in groups), everything)
    own = {}
    for key, params in groups.items():
        step.generator.manual_seed(7)
        own[key] = torch.autograd.grad(step.loss_terms(batch)[key], params, allow_unused=True)
    expected = [g for key in groups for g in own[key]]
    for got, want in zip(total, expected, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)


def test_sac_step_is_adam_on_every_net_then_polyak_on_the_targets():
    step, twin = _sac(), _sac()  # same seed: same nets
    batch = _store(gym.spaces.Box(-1, 1, (ACTION_DIM,))).sample(32)
    nets = twin.nets
    modules = [*nets.critics, nets.actor]
    adams = [torch.optim.Adam(m.parameters(), lr=3e-4, eps=1e-7) for m in modules]
    adams.append(torch.optim.Adam([nets.log_alpha], lr=3e-4, eps=1e-7))
    targets_before = _params(*nets.target_critics)
    step(batch)
    terms = twin.loss_terms(batch)
    sum(v for k, v in terms.items() if k.startswith("loss_")).backward()
    for adam in adams:
        adam.step()
    for mine, torchs in zip(
        _params(*step.nets.critics, step.nets.actor), _params(*modules), strict=True
    ):
        torch.testing.assert_close(mine, torchs, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(step.nets.log_alpha, nets.log_alpha, rtol=1e-6, atol=1e-8)
    for target, before, online in zip(
        _params(*step.nets.target_critics),
        targets_before,
        _params(*step.nets.critics),
        strict=True,
    ):
        torch.testing.assert_close(target, before + 0.005 * (online - before))


def test_sac_metrics_are_summed_on_the_device_and_read_once():
    step = _sac()
    store = _store(gym.spaces.Box(-1, 1, (ACTION_DIM,)))
    for _ in range(3):
        step(store.sample(16))
    metrics = step.metrics.read()
    assert set(metrics) == {
        "loss/critic",
        "loss/critic_twin",
        "loss/actor",
        "loss/alpha",
        "sac/alpha",
        "sac/logp_mean",
        "sac/q_mean",
        "sac/target_mean",
        "sac/td_error_mean",
        HEALTH_NONFINITE_KEY,
    }
    assert metrics[HEALTH_NONFINITE_KEY] == 0.0 and metrics["sac/alpha"] < 1.0
    assert step.metrics.read() == {}


def test_metric_sums_take_scalars_of_any_float_shape_one_and_keep_no_graph():
    sums = MetricSums(("loss", "alpha", "flag"), device="cpu")
    x = torch.tensor(2.0, requires_grad=True)
    for _ in range(2):
        sums.add({"loss": x * 3, "alpha": torch.tensor([0.5]), "flag": torch.tensor(1.0).double()})
    assert not sums.sums.requires_grad and sums.sums.dtype == torch.float32
    assert sums.read() == {"loss": 6.0, "alpha": 0.5, "flag": 1.0}


def test_a_nonfinite_sac_batch_changes_no_parameter():
    step = _sac()
    batch = _store(gym.spaces.Box(-1, 1, (ACTION_DIM,))).sample(16)
    batch.rewards[3] = float("nan")
    before = _params(*step.nets.critics, step.nets.actor)
    step(batch)
    for now, then in zip(_params(*step.nets.critics, step.nets.actor), before, strict=True):
        torch.testing.assert_close(now, then, rtol=0, atol=0)
    assert step.metrics.read()[HEALTH_NONFINITE_KEY] == 1.0


@pytest.mark.parametrize("grad_clip", [None, 0.1])
def test_sample_sac_step_and_priorities_never_read_the_host(grad_clip):
    step = _sac(grad_clip=grad_clip)
    store = _store(gym.spaces.Box(-1, 1, (ACTION_DIM,)))
    step(store.sample(16))  # lazy initializations happen on the first call
    with host_reads_refused():
        batch = store.sample(16)
        store.sampler.update_priorities(batch.indices, step(batch))
    assert step.metrics.count == 2


def _dqn(double_q: bool = True, lr: float = 5e-4) -> DQNStep:
    torch.manual_seed(0)
    q_net = DiscreteQNet(OBS_DIM, 3, [16], dueling=True)
    target = copy.deepcopy(q_net).requires_grad_(False)
    settings = DQNSettings(gamma=0.9, lr=lr, grad_clip=10.0, double_q=double_q)
    return DQNStep(q_net, target, settings)


@pytest.mark.parametrize("double_q", [True, False])
def test_sample_dqn_step_and_priorities_never_read_the_host(double_q):
    step = _dqn(double_q)
    store = _store(gym.spaces.Discrete(3))
    step(store.sample(16))
    with host_reads_refused():
        batch = store.sample(16)
        store.sampler.update_priorities(batch.indices, step(batch))
        step.sync_target()
    metrics = step.metrics.read()
    assert metrics[HEALTH_NONFINITE_KEY] == 0.0 and metrics["loss/td"] > 0


def test_dqn_learns_a_fixed_batch_and_syncs_its_target_exactly():
    step = _dqn(lr=1e-2)
    batch = _store(gym.spaces.Discrete(3), replay="uniform").sample(64)
    first = float(step.loss_terms(batch)["loss_td"].detach())
    for _ in range(200):
        step(batch)
    assert float(step.loss_terms(batch)["loss_td"].detach()) < 0.2 * first
    step.sync_target()
    for target, online in zip(_params(step.target_net), _params(step.q_net), strict=True):
        torch.testing.assert_close(target, online, rtol=0, atol=0)


def test_polyak_moves_targets_by_tau():
    online, target = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    before, source = _params(target), _params(online)
    TargetPair([online], [target]).update(0.25)
    for now, old, new in zip(_params(target), before, source, strict=True):
        torch.testing.assert_close(now, 0.75 * old + 0.25 * new)
    with pytest.raises(ValueError, match="differ"):
        TargetPair([online], [torch.nn.Linear(2, 3)])
