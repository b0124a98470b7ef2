"""The array learner against RLlib's own learner path (#48): GAE row by row, one epoch of
minibatch updates on the same batch and order (loss terms, gradients, parameters and Adam
moments), the same result and metric keys, and a minibatch step that never asks the host a
question."""

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns
from ray.rllib.policy.sample_batch import MultiAgentBatch, SampleBatch
from ray.rllib.utils.postprocessing.value_predictions import compute_value_targets

from rl_platform.base.metric_keys import PPO_QUANTITIES
from rl_platform.learners.array_ppo import ArrayPPOLearner, minibatch_order
from rl_platform.learners.flat_batch import FlatBatch
from rl_platform.learners.update_step import METRIC_KEYS
from rl_platform.losses.gae import generalized_advantages
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.run.metrics import extract_metrics
from rl_platform.spec import validate_spec_data
from tests.unit.host_reads_support import host_reads_refused

OBS_DIM, ACTIONS, MODULE = 6, 4, "main"


def _spec(model_override: dict | None = None, **training: Any) -> Any:
    model = model_override or {"type": "mlp", "hidden": [16, 16], "activation": "tanh"}
    return validate_spec_data(
        {
            "name": "array_learner",
            "env": {"id": "rlp/Duel-v0", "envs_per_runner": 4},
            "model": model,
            "training": {"grad_clip": 0.5, "entropy_coeff": 0.01, "use_kl_loss": True} | training,
        }
    )


def _learner(spec: Any) -> Any:
    obs = gym.spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
    config = build_algorithm_config(spec).multi_agent(
        policies={MODULE}, policy_mapping_fn=lambda *a, **k: MODULE
    )
    learner = config.build_learner(env=None, spaces={MODULE: (obs, gym.spaces.Discrete(ACTIONS))})
    assert isinstance(learner, ArrayPPOLearner)
    return learner


def _batch(size: int, seed: int = 0) -> FlatBatch:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(size, ACTIONS)).astype(np.float32)
    actions = rng.integers(0, ACTIONS, size)
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    return FlatBatch(
        obs=torch.tensor(rng.normal(size=(size, OBS_DIM)), dtype=torch.float32),
        actions=torch.tensor(actions),
        logp=torch.tensor(log_probs[np.arange(size), actions]),
        logits=torch.tensor(logits),
        advantages=torch.tensor(rng.normal(size=size), dtype=torch.float32),
        value_targets=torch.tensor(3 * rng.normal(size=size), dtype=torch.float32),
    )


def _sample_batch(flat: FlatBatch) -> MultiAgentBatch:
    data = {
        Columns.OBS: flat.obs.numpy(),
        Columns.ACTIONS: flat.actions.numpy(),
        Columns.ACTION_LOGP: flat.logp.numpy(),
        Columns.ACTION_DIST_INPUTS: flat.logits.numpy(),
        "advantages": flat.advantages.numpy(),
        "value_targets": flat.value_targets.numpy(),
    }
    return MultiAgentBatch({MODULE: SampleBatch(data)}, env_steps=flat.size)


def _twins(spec: Any) -> tuple[Any, Any]:
    ours, rllibs = _learner(spec), _learner(spec)
    rllibs.module.set_state(ours.module.get_state())
    return ours, rllibs


def _optimizer(learner: Any) -> torch.optim.Adam:
    ((_, optimizer),) = learner.get_optimizers_for_module(MODULE)
    return optimizer


def test_gae_equals_rllibs_value_targets_row_by_row() -> None:
    """A `[T, R]` grid whose rows hold several trajectories (terminated, truncated with the
    final observation's value, cut by the fragment's end) against RLlib's recursion over each
    trajectory with its artificial bootstrap step."""
    rng = np.random.default_rng(3)
    steps, rows = 12, 5
    values = rng.normal(size=(steps, rows)).astype(np.float32)
    rewards = rng.normal(size=(steps, rows)).astype(np.float32)
    ended = rng.random((steps, rows)) < 0.2
    terminated = ended & (rng.random((steps, rows)) < 0.5)
    final_values = rng.normal(size=(steps, rows)).astype(np.float32)
    last_values = rng.normal(size=rows).astype(np.float32)
    next_values = np.concatenate([values[1:], last_values[None]])
    next_values = np.where(ended & ~terminated, final_values, next_values)
    boundary = ended.copy()
    boundary[-1] = True
    advantages, targets = generalized_advantages(
        rewards=torch.tensor(rewards),
        values=torch.tensor(values),
        next_values=torch.tensor(next_values),
        terminated=torch.tensor(terminated),
        boundary=torch.tensor(boundary),
        gamma=0.97,
        lambda_=0.9,
    )
    for row in range(rows):
        start = 0
        for end in np.flatnonzero(boundary[:, row]).tolist():
            piece = slice(start, end + 1)
            last = np.arange(start, end + 1) == end
            # RLlib's layout: the trajectory plus one artificial step holding V(s_{T}).
            want = compute_value_targets(
                values=np.append(values[piece, row], next_values[end, row]),
                rewards=np.append(rewards[piece, row], 0.0),
                terminateds=np.append(terminated[piece, row], False).astype(np.float32),
                truncateds=np.append(last & ~terminated[end, row], False).astype(np.float32),
                gamma=0.97,
                lambda_=0.9,
            )[:-1]
            np.testing.assert_allclose(targets[piece, row].numpy(), want, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(
                advantages[piece, row].numpy(), want - values[piece, row], rtol=1e-5, atol=1e-5
            )
            start = end + 1


@pytest.mark.parametrize("minibatch_size", [16, 64])
def test_one_epoch_equals_rllibs_update(ray_local, minibatch_size: int) -> None:
    """Same weights, same batch, same minibatch order (unshuffled): the parameters and Adam's
    moments after one epoch agree with RLlib's `Learner.update` within 1e-5."""
    spec = _spec()
    ours, rllibs = _twins(spec)
    flat = _batch(64)
    order = minibatch_order(
        64, minibatch_size=minibatch_size, num_epochs=1, shuffle=False, device="cpu"
    )
    ours.train_minibatches(MODULE, flat, order)
    rllibs.update(
        batch=_sample_batch(flat),
        minibatch_size=minibatch_size,
        num_epochs=1,
        shuffle_batch_per_epoch=False,
        timesteps={},
    )
    mine, theirs = _optimizer(ours), _optimizer(rllibs)
    for p_ours, p_rllib in zip(
        ours.module[MODULE].parameters(), rllibs.module[MODULE].parameters(), strict=True
    ):
        torch.testing.assert_close(p_ours, p_rllib, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(p_ours.grad, p_rllib.grad, rtol=1e-5, atol=1e-5)
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(
                mine.state[p_ours][key], theirs.state[p_rllib][key], rtol=1e-5, atol=1e-7
            )
        assert (
            float(mine.state[p_ours]["step"])
            == float(theirs.state[p_rllib]["step"])
            == 64 // minibatch_size
        )


def test_loss_terms_equal_rllibs_loss(ray_local) -> None:
    """Each PPO term of one minibatch against what RLlib's `compute_loss_for_module` logs and
    returns (total loss, policy, value, entropy and KL terms, diagnostics), matched through
    `PPO_QUANTITIES`, the one table of their names."""
    spec = _spec()
    ours, rllibs = _twins(spec)
    flat = _batch(32, seed=1)
    step = ours._update_step(MODULE)
    terms = step.loss_terms(flat)
    batch = {k: torch.as_tensor(v) for k, v in _sample_batch(flat).policy_batches[MODULE].items()}
    module = rllibs.module[MODULE]
    total = rllibs.compute_loss_for_module(
        module_id=MODULE,
        config=rllibs.config.get_config_for_module(MODULE),
        batch=batch,
        fwd_out=module.forward_train(batch),
    )
    logged = rllibs.metrics.reduce()[MODULE]
    torch.testing.assert_close(
        sum(v for k, v in terms.items() if k.startswith("loss_")), total, rtol=1e-5, atol=1e-6
    )
    compared = {q.result_key: q.term for q in PPO_QUANTITIES if q.term in terms}
    for key in ("policy_loss", "vf_loss", "entropy", "mean_kl_loss", "clip_frac", "approx_kl"):
        assert key in compared, key
    for key, term in compared.items():
        got = float(terms[term].detach())
        assert got == pytest.approx(float(logged[key]), rel=1e-5, abs=1e-6), key


def _rollout(flat: FlatBatch, rows: int) -> Any:
    """`flat`'s steps as the array runner's `[T, R]` batch (every step valid, no game end)."""
    from rl_platform.sampling.rollout_batch import RolloutBatch

    def grid(t: torch.Tensor) -> torch.Tensor:
        return t.view(-1, rows, *t.shape[1:])

    steps = flat.size // rows
    return RolloutBatch(
        module_id=MODULE,
        obs=grid(flat.obs),
        last_obs=torch.zeros(rows, OBS_DIM),
        final_obs=None,
        actions=grid(flat.actions),
        logp=grid(flat.logp),
        logits=grid(flat.logits),
        rewards=grid(flat.advantages),
        terminated=torch.zeros(steps, rows, dtype=torch.bool),
        ended=torch.zeros(steps, rows, dtype=torch.bool),
        valid=torch.ones(steps, rows, dtype=torch.bool),
        num_env_steps=flat.size,
    )


def test_both_learner_paths_report_each_ppo_quantity_under_the_same_name(ray_local) -> None:
    """An update through the array learner and one through RLlib's: the same result key for
    every quantity of `PPO_QUANTITIES`, and the same metric keys in the run (one name each:
    no `train/policy_loss` beside `loss/policy`)."""
    ours, rllibs = _twins(_spec())
    flat = _batch(64, seed=3)
    settings = {"num_epochs": 1, "minibatch_size": 32, "timesteps": {}}
    mine = ours.update(episodes=[_rollout(flat, rows=8)], shuffle_batch_per_epoch=False, **settings)
    theirs = rllibs.update(batch=_sample_batch(flat), shuffle_batch_per_epoch=False, **settings)
    result_keys = {q.result_key for q in PPO_QUANTITIES}
    assert result_keys <= set(mine[MODULE]) and result_keys <= set(theirs[MODULE])
    ours_metrics, rllibs_metrics = (
        set(extract_metrics({"learners": result}, previous_env_steps=0))
        for result in (mine, theirs)
    )
    assert ours_metrics == rllibs_metrics
    assert {q.metric for q in PPO_QUANTITIES if q.metric is not None} <= ours_metrics
    assert not {"train/policy_loss", "train/vf_loss", "loss/entropy"} & ours_metrics


def test_the_minibatch_step_never_reads_the_host(ray_local) -> None:
    learner = _learner(_spec())
    flat = _batch(32, seed=2)
    step = learner._update_step(MODULE)
    index = torch.arange(16)
    step(flat, index)  # first call: lazy initializations (gradient buffers) happen here
    with host_reads_refused():
        metrics = step(flat, index + 16)
    assert metrics.shape == (len(METRIC_KEYS),)
    assert bool(torch.isfinite(metrics).all())


def test_a_nonfinite_step_changes_nothing_and_is_counted(ray_local) -> None:
    learner = _learner(_spec())
    flat = _batch(16, seed=4)
    step = learner._update_step(MODULE)
    step(flat, torch.arange(16))
    optimizer = _optimizer(learner)
    before = {
        id(p): (p.detach().clone(), {k: v.clone() for k, v in optimizer.state[p].items()})
        for p in learner.module[MODULE].parameters()
    }
    flat.advantages[3] = float("nan")
    metrics = step(flat, torch.arange(16))
    assert float(metrics[-1]) == 1.0  # "nonfinite"
    for p in learner.module[MODULE].parameters():
        value, state = before[id(p)]
        torch.testing.assert_close(p.detach(), value, rtol=0, atol=0)
        for key, saved in state.items():
            torch.testing.assert_close(optimizer.state[p][key], saved, rtol=0, atol=0)


def test_minibatch_order_follows_rllibs_cyclic_iterator() -> None:
    """ceil(epochs * size / minibatch) minibatches; a minibatch may wrap into the next pass."""
    order = minibatch_order(10, minibatch_size=4, num_epochs=2, shuffle=False, device="cpu")
    assert order.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1], [2, 3, 4, 5], [6, 7, 8, 9]]
    shuffled = minibatch_order(10, minibatch_size=5, num_epochs=3, shuffle=True, device="cpu")
    for epoch in shuffled.view(3, 10):
        assert sorted(epoch.tolist()) == list(range(10))


LSTM_MODEL = {
    "type": "lstm",
    "encoder": [8],
    "lstm_cell_size": 8,
    "actor": [8],
    "critic": [8],
    "max_seq_len": 4,
    "critic_input": "observation",
}


def _sequences(learner: Any, rows: int, seq_len: int, *, seed: int) -> FlatBatch:
    flat = _batch(rows * seq_len, seed=seed)
    state = {
        k: torch.as_tensor(v).expand(rows, *v.shape).clone() + 0.1 * torch.randn(rows, *v.shape)
        for k, v in learner.module[MODULE].get_initial_state().items()
    }

    def shaped(t: torch.Tensor) -> torch.Tensor:
        return t.view(rows, seq_len, *t.shape[1:])

    return FlatBatch(
        obs=shaped(flat.obs),
        actions=shaped(flat.actions),
        logp=shaped(flat.logp),
        logits=shaped(flat.logits),
        advantages=shaped(flat.advantages),
        value_targets=shaped(flat.value_targets),
        valid=torch.ones(rows, seq_len, dtype=torch.bool),
        resets=torch.zeros(rows, seq_len, dtype=torch.bool),
        state_in=state,
    )


def test_a_recurrent_step_equals_rllibs_update_on_the_same_sequences(ray_local) -> None:
    """Sequences without episode starts: the written-out LSTM and the masked terms give
    RLlib's `_update` (packed cuDNN-style LSTM, boolean-indexed loss) within 1e-5."""
    ours, rllibs = _twins(_spec(model_override=LSTM_MODEL))
    flat = _sequences(ours, rows=4, seq_len=4, seed=5)
    ours.train_minibatches(MODULE, flat, torch.arange(4)[None])
    batch = {
        Columns.OBS: flat.obs,
        Columns.ACTIONS: flat.actions,
        Columns.ACTION_LOGP: flat.logp,
        Columns.ACTION_DIST_INPUTS: flat.logits,
        "advantages": flat.advantages,
        "value_targets": flat.value_targets,
        Columns.STATE_IN: flat.state_in,
        Columns.SEQ_LENS: torch.full((4,), 4),
        Columns.LOSS_MASK: flat.valid,
    }
    rllibs._update({MODULE: batch})
    mine, theirs = _optimizer(ours), _optimizer(rllibs)
    pairs = zip(ours.module[MODULE].parameters(), rllibs.module[MODULE].parameters(), strict=True)
    for p_ours, p_rllib in pairs:
        torch.testing.assert_close(p_ours.grad, p_rllib.grad, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(p_ours, p_rllib, rtol=1e-5, atol=1e-6)
        for key in ("exp_avg", "exp_avg_sq"):
            torch.testing.assert_close(
                mine.state[p_ours][key], theirs.state[p_rllib][key], rtol=1e-5, atol=1e-7
            )


STREAMING_MODEL = {
    "type": "transformer_lstm",
    "encoder": "streaming",
    "obs_split": {"self": [0, 3], "opponent": [3, 6]},
    "history": 4,
    "layers": 1,
    "heads": 2,
    "d_model": 8,
    "lstm_cell_size": 8,
    "actor": [8],
    "critic": [8],
    "obs_encoder": [8],
    "max_seq_len": 4,
    "critic_input": "observation",
}


def _streaming_learner() -> Any:
    from rl_platform.connectors.opponent_history import OpponentHistory

    raw = gym.spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
    obs = OpponentHistory(
        raw, None, history=1, obs_split=STREAMING_MODEL["obs_split"]
    ).observation_space
    config = build_algorithm_config(_spec(model_override=STREAMING_MODEL)).multi_agent(
        policies={MODULE}, policy_mapping_fn=lambda *a, **k: MODULE
    )
    return config.build_learner(env=None, spaces={MODULE: (obs, gym.spaces.Discrete(ACTIONS))})


def _history_obs(rows: int, seq_len: int) -> dict[str, torch.Tensor]:
    return {
        "obs": torch.randn(rows, seq_len, 3),
        "opponent_history": torch.randn(rows, seq_len, 1, 3),
        "history_mask": torch.ones(rows, seq_len, 1),
    }


@pytest.mark.parametrize("model", ["lstm", "streaming"])
def test_a_recurrent_step_never_reads_the_host(ray_local, model: str) -> None:
    """Sequences with an episode start inside one and a padded step: the written-out LSTM,
    the per-episode streaming window and the masked terms run without a host read."""
    learner = _learner(_spec(model_override=LSTM_MODEL)) if model == "lstm" else None
    learner = learner or _streaming_learner()
    flat = _sequences(learner, rows=4, seq_len=4, seed=6)
    if model == "streaming":
        flat.obs = _history_obs(4, 4)
    flat.resets[1, 2] = True
    flat.valid[2, 3] = False
    step = learner._update_step(MODULE)
    step(flat, torch.arange(2))
    with host_reads_refused():
        metrics = step(flat, torch.arange(2, 4))
    assert bool(torch.isfinite(metrics).all())


def test_without_lag_the_decoupled_batch_is_the_ppo_batch(ray_local) -> None:
    """Decoupled PPO (resources.overlap) weights each step by pi_prox / pi_behaviour: where the
    acting policy is the learner's (no lag) every weight is 1 and the ratio's base unchanged;
    a lagged step gets the ratio of the two policies."""
    from rl_platform.learners.flat_batch import with_proximal_policy
    from rl_platform.losses.ppo import categorical_terms

    learner = _learner(_spec())
    flat = _batch(40, seed=9)
    with torch.no_grad():
        logits = learner.module[MODULE].forward_train({Columns.OBS: flat.obs})[
            Columns.ACTION_DIST_INPUTS
        ]
    current, _, _ = categorical_terms(logits, flat.actions)
    flat.logp = current.clone()
    flat.logp[0] -= 0.1  # one lagged step: the acting policy found its action less likely
    decoupled = with_proximal_policy(learner.module[MODULE], flat, rows=16)
    torch.testing.assert_close(decoupled.logp, current, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(decoupled.logits, logits.float(), rtol=1e-6, atol=1e-6)
    want = torch.ones(40)
    want[0] = torch.exp(torch.tensor(0.1))
    torch.testing.assert_close(decoupled.behaviour_weights, want, rtol=1e-5, atol=1e-5)


def test_a_module_without_a_valid_step_is_left_alone(ray_local) -> None:
    """A trained module that played no game of the batch (a league's second learner, say):
    the update skips it instead of dividing by an empty batch."""
    from rl_platform.sampling.rollout_batch import RolloutBatch

    learner = _learner(_spec())
    before = [p.detach().clone() for p in learner.module[MODULE].parameters()]
    steps, rows = 5, 4
    zeros = torch.zeros(steps, rows)
    empty = RolloutBatch(
        module_id=MODULE,
        obs=torch.zeros(steps, rows, OBS_DIM),
        last_obs=torch.zeros(rows, OBS_DIM),
        final_obs=None,
        actions=zeros.long(),
        logp=zeros,
        logits=torch.zeros(steps, rows, ACTIONS),
        rewards=zeros,
        terminated=zeros.bool(),
        ended=zeros.bool(),
        valid=zeros.bool(),
        num_env_steps=steps * rows,
    )
    learner.update(episodes=[empty], timesteps={}, num_epochs=2, minibatch_size=8)
    for p, saved in zip(learner.module[MODULE].parameters(), before, strict=True):
        assert torch.equal(p.detach(), saved)
