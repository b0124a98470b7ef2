"""The off-policy fast path against RLlib's own learners on the same batch (issue #57), fp32:

- DQN: RLlib's `DefaultDQNTorchRLModule` and ours (`DiscreteQNet`, dueling) have the same
  layers, so its weights are copied into ours and one whole update is compared: loss terms,
  gradients, the global-norm clip and Adam (RLlib's `compute_loss_for_module`,
  `postprocess_gradients`, `apply_gradients` against `DQNStep`), then the target sync;
- SAC: RLlib's Q-networks are two-stream encoders (obs and action MLPs, a fusion net), not
  the paper's MLP over [obs, action] that `ContinuousQNet` is, so our terms are computed on
  RLlib's forward outputs and compared with its learner's: terms, each optimizer's
  gradients, one step of our device Adam against RLlib's `apply_gradients`, and the Polyak
  target update against `after_gradient_based_update`; the actor's layers do match, so the
  squashed Gaussian is compared with RLlib's `TorchSquashedGaussian` on the same noise.

The learners are built locally (`build_learner`, no Ray started).
"""

import copy

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.dqn import DQNConfig
from ray.rllib.algorithms.sac import SACConfig
from ray.rllib.core import DEFAULT_MODULE_ID as MODULE
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import TorchSquashedGaussian
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.utils.metrics import NUM_ENV_STEPS_SAMPLED_LIFETIME

from rl_platform.learners.clipped_adam import ClippedAdams
from rl_platform.learners.dqn_step import DQNSettings, DQNStep
from rl_platform.learners.polyak import TargetPair
from rl_platform.losses.ppo import total_loss
from rl_platform.losses.sac import sac_loss
from rl_platform.nets.q_nets import DiscreteQNet
from rl_platform.nets.squashed_gaussian import SquashedGaussianActor
from rl_platform.replay.store import ReplayBatch

OBS_DIM, ACTION_DIM, ACTIONS, BATCH, HIDDEN = 5, 2, 4, 64, [16, 16]
TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}


def _rows(actions: torch.Tensor, seed: int) -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    return {
        Columns.OBS: torch.randn(BATCH, OBS_DIM, generator=generator),
        Columns.NEXT_OBS: torch.randn(BATCH, OBS_DIM, generator=generator),
        Columns.ACTIONS: actions,
        Columns.REWARDS: torch.randn(BATCH, generator=generator),
        Columns.TERMINATEDS: torch.rand(BATCH, generator=generator) < 0.2,
        "n_step": torch.randint(1, 4, (BATCH,), generator=generator),
        "weights": torch.rand(BATCH, generator=generator) + 0.5,
    }


def _ours(rows: dict[str, torch.Tensor]) -> ReplayBatch:
    return ReplayBatch(
        obs=rows[Columns.OBS],
        actions=rows[Columns.ACTIONS],
        rewards=rows[Columns.REWARDS],
        next_obs=rows[Columns.NEXT_OBS],
        terminated=rows[Columns.TERMINATEDS].float(),
        truncated=torch.zeros(BATCH),
        n_steps=rows["n_step"].float(),
        weights=rows["weights"],
        indices=torch.arange(BATCH),
    )


def _params(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in module.named_parameters()}


def _dqn_learner():
    obs_space = gym.spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
    config = (
        DQNConfig()
        .environment(observation_space=obs_space, action_space=gym.spaces.Discrete(ACTIONS))
        .training(lr=1e-2, gamma=0.9, grad_clip=0.1, double_q=True, dueling=True, tau=1.0)
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=HIDDEN, fcnet_activation="relu"))
    )
    spaces = {MODULE: (obs_space, gym.spaces.Discrete(ACTIONS))}
    return config.build_learner(env=None, spaces=spaces)


def _copy_into(net: DiscreteQNet, module) -> None:
    """RLlib's encoder, advantage and value heads are our trunk, `advantage`, `value`."""
    theirs = [*module.encoder.parameters(), *module.af.parameters(), *module.vf.parameters()]
    with torch.no_grad():
        for mine, source in zip(net.parameters(), theirs, strict=True):
            mine.copy_(source)


def test_one_dqn_update_matches_rllibs_learner():
    learner = _dqn_learner()
    module = learner.module[MODULE]
    q_net = DiscreteQNet(OBS_DIM, ACTIONS, HIDDEN, dueling=True)
    _copy_into(q_net, module)
    target = copy.deepcopy(q_net).requires_grad_(False)
    rows = _rows(torch.randint(0, ACTIONS, (BATCH,), generator=torch.Generator()), seed=1)
    config = learner.config.get_config_for_module(MODULE)
    fwd = module.forward_train(rows)
    rllib_loss = learner.compute_loss_for_module(
        module_id=MODULE, config=config, batch=rows, fwd_out=fwd
    )
    step = DQNStep(q_net, target, DQNSettings(gamma=0.9, lr=1e-2, grad_clip=0.1))
    terms = step.loss_terms(_ours(rows))
    torch.testing.assert_close(terms["loss_td"], rllib_loss, **TOLERANCE)
    params = [*module.encoder.parameters(), *module.af.parameters(), *module.vf.parameters()]
    grads = dict(zip(params, torch.autograd.grad(rllib_loss, params), strict=True))
    refs = {learner.get_param_ref(p): g for p, g in grads.items()}
    norm = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads.values()]))
    assert norm > 0.1  # the clip is at work
    before = [p.detach().clone() for p in params]
    learner.apply_gradients(learner.postprocess_gradients(refs))
    step(_ours(rows))
    for got, want, old in zip(q_net.parameters(), params, before, strict=True):
        torch.testing.assert_close(got.detach(), want.detach(), **TOLERANCE)
        assert not torch.equal(want.detach(), old)
    step.sync_target()
    torch.testing.assert_close(list(target.parameters()), list(q_net.parameters()), rtol=0, atol=0)


def _sac_learner():
    obs_space = gym.spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
    action_space = gym.spaces.Box(-2.0, 2.0, (ACTION_DIM,), np.float32)
    config = (
        SACConfig()
        .environment(observation_space=obs_space, action_space=action_space)
        .training(actor_lr=3e-3, critic_lr=1e-2, alpha_lr=3e-3, gamma=0.9, tau=0.05)
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=HIDDEN, fcnet_activation="relu", fusionnet_hiddens=[16]
            )
        )
    )
    return config.build_learner(env=None, spaces={MODULE: (obs_space, action_space)})


def test_sac_terms_gradients_adam_and_targets_match_rllibs_learner():
    learner = _sac_learner()
    module = learner.module[MODULE]
    rows = _rows(torch.rand(BATCH, ACTION_DIM, generator=torch.Generator()) * 2 - 1, seed=2)
    torch.manual_seed(0)
    fwd = module.forward_train(rows)
    log_alpha = learner.curr_log_alpha[MODULE]
    batch = _ours(rows)
    terms = sac_loss(
        q_pred=fwd["qf_preds"],
        q_twin_pred=fwd["qf_twin_preds"],
        q_target_next=fwd["q_target_next"],
        logp_next=fwd["logp_next_resampled"],
        q_policy=fwd["q_curr"],
        logp_policy=fwd["logp_resampled"],
        log_alpha=log_alpha,
        rewards=batch.rewards,
        terminated=batch.terminated,
        n_steps=batch.n_steps,
        weights=batch.weights,
        gamma=0.9,
        target_entropy=-float(ACTION_DIM),
        critic_loss="huber",  # RLlib's SAC learner always regresses with Huber
    )
    config = learner.config.get_config_for_module(MODULE)
    rllib_loss = learner.compute_loss_for_module(
        module_id=MODULE, config=config, batch=rows, fwd_out=fwd
    )
    torch.testing.assert_close(total_loss(terms), rllib_loss, **TOLERANCE)
    for ours, theirs in (
        ("loss_critic", "qf_loss"),
        ("loss_critic_twin", "qf_twin_loss"),
        ("loss_actor", "policy_loss"),
        ("loss_alpha", "alpha_loss"),
        ("q_mean", "qf_mean"),
        ("logp_mean", "logps"),
    ):
        logged = torch.as_tensor(learner.metrics.peek((MODULE, theirs)))
        torch.testing.assert_close(terms[ours].detach(), logged.float(), **TOLERANCE)
    # RLlib: one backward per optimizer (retaining the graph); ours: one of the sum.
    rllib_grads = learner.compute_gradients({MODULE: rllib_loss})
    named = dict(module.named_parameters()) | {"log_alpha": log_alpha}
    refs = {name: learner.get_param_ref(p) for name, p in named.items()}
    theirs = {name: rllib_grads[ref].clone() for name, ref in refs.items() if ref in rllib_grads}
    assert sorted(theirs) == sorted(n for n, p in named.items() if p.requires_grad)
    for param in named.values():
        param.grad = None
    total_loss(terms).backward()
    for name, grad in theirs.items():
        torch.testing.assert_close(named[name].grad, grad, **TOLERANCE, msg=name)
    _compare_adam_and_targets(learner, module, named, rllib_grads)


def _compare_adam_and_targets(learner, module, named, rllib_grads) -> None:
    """Our grads are on the parameters; RLlib's apply its own. Then the same from `before`
    with our Adam, and the targets moved by RLlib and by `TargetPair`."""
    before = {name: p.detach().clone() for name, p in named.items()}
    ours_grads = {name: p.grad.clone() for name, p in named.items() if p.grad is not None}
    learner.apply_gradients(rllib_grads)
    after_rllib = {name: p.detach().clone() for name, p in named.items()}
    pairs = module.get_target_network_pairs()
    targets_before = [_params(t) for _, t in pairs]
    learner.after_gradient_based_update(timesteps={NUM_ENV_STEPS_SAMPLED_LIFETIME: 1})
    targets_rllib = [_params(t) for _, t in pairs]
    with torch.no_grad():
        for name, p in named.items():
            p.copy_(before[name])
            p.grad = ours_grads.get(name)
        for (_, target), saved in zip(pairs, targets_before, strict=True):
            for name, p in target.named_parameters():
                p.copy_(saved[name])
    groups = [
        [*module.qf_encoder.parameters(), *module.qf.parameters()],
        [*module.qf_twin_encoder.parameters(), *module.qf_twin.parameters()],
        [*module.pi_encoder.parameters(), *module.pi.parameters()],
        [named["log_alpha"]],
    ]
    lrs = [1e-2, 1e-2, 3e-3, 3e-3]
    adams = [torch.optim.Adam(g, lr=lr, eps=1e-7) for g, lr in zip(groups, lrs, strict=True)]
    ClippedAdams(adams, grad_clip=None).step()
    for name, p in named.items():
        torch.testing.assert_close(p.detach(), after_rllib[name], **TOLERANCE, msg=name)
    TargetPair([m for m, _ in pairs], [t for _, t in pairs]).update(0.05)
    for (_, target), expected in zip(pairs, targets_rllib, strict=True):
        for name, p in target.named_parameters():
            torch.testing.assert_close(p.detach(), expected[name], **TOLERANCE, msg=name)


def test_the_actor_is_rllibs_squashed_gaussian():
    learner = _sac_learner()
    module = learner.module[MODULE]
    actor = SquashedGaussianActor(OBS_DIM, ACTION_DIM, HIDDEN)
    theirs = [*module.pi_encoder.parameters(), *module.pi.parameters()]
    with torch.no_grad():
        for mine, source in zip(actor.parameters(), theirs, strict=True):
            mine.copy_(source)
    obs = torch.randn(BATCH, OBS_DIM, generator=torch.Generator().manual_seed(3))
    inputs = module.pi(module.pi_encoder({Columns.OBS: obs})["encoder_out"])
    torch.testing.assert_close(actor(obs), inputs, rtol=0, atol=0)
    torch.manual_seed(4)
    rllib_action, rllib_logp = TorchSquashedGaussian.from_logits(inputs).rsample_and_logp()
    torch.manual_seed(4)
    action, logp = actor.sample(obs)
    torch.testing.assert_close(action, rllib_action, **TOLERANCE)
    torch.testing.assert_close(logp, rllib_logp, **TOLERANCE)
