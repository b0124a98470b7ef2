"""`critic_input` and `lstm_skip` of the recurrent modules (lstm, transformer_lstm).

`critic_input: observation` gives lstm and transformer_lstm a critic of their own (an MLP on
the own observation): values must not depend on the recurrent state and the value loss must
not reach the actor's trunk.
`lstm_skip: true` hands the heads the LSTM's input beside its output: the current step reaches
the policy even through an LSTM that lets nothing pass.
Module-only tests: no Ray runtime.
"""

import gymnasium as gym
import numpy as np
import pytest
import torch
from ray.rllib.core.columns import Columns

from rl_platform.connectors.opponent_history import OpponentHistory
from rl_platform.modules.lstm_module import LSTMActorCriticModule
from rl_platform.modules.transformer_lstm_module import TransformerLSTMModule
from tests.integration.test_transformer_lstm_module import RAW, SMALL

LSTM = {"encoder": [8], "lstm_cell_size": 12, "actor": [8], "critic": [8], "max_seq_len": 4}
TRANSFORMER = {**SMALL, "layers": 1}
ACTIONS = gym.spaces.Discrete(3)


def _lstm(**config) -> LSTMActorCriticModule:
    torch.manual_seed(0)
    space = gym.spaces.Box(-1.0, 1.0, (4,), np.float32)
    return LSTMActorCriticModule(
        observation_space=space, action_space=ACTIONS, model_config={**LSTM, **config}
    )


def _transformer(encoder: str = "window", **config) -> TransformerLSTMModule:
    torch.manual_seed(0)
    frames = 5 if encoder == "window" else 1
    space = OpponentHistory(RAW, None, history=frames, obs_split=TRANSFORMER["obs_split"])
    return TransformerLSTMModule(
        observation_space=space.observation_space,
        action_space=ACTIONS,
        model_config={**TRANSFORMER, "encoder": encoder, **config},
    )


def _obs(module, b: int, t: int):
    if isinstance(module, LSTMActorCriticModule):
        return torch.randn(b, t, 4)
    frames = module.parsed_config.input_frames
    return {
        "obs": torch.randn(b, t, 3),
        "opponent_history": torch.randn(b, t, frames, 4),
        "history_mask": torch.ones(b, t, frames),
    }


def _batch(module, obs, b: int, *, state_noise: float = 0.0) -> dict:
    state = {}
    for key, value in module.get_initial_state().items():
        tensor = torch.from_numpy(value).expand(b, *value.shape).clone()
        if key in ("h", "c"):
            tensor += state_noise * torch.randn_like(tensor)
        state[key] = tensor
    return {Columns.OBS: obs, Columns.STATE_IN: state}


MODULES = {
    "lstm": _lstm,
    "transformer_window": lambda **kw: _transformer("window", **kw),
    "transformer_streaming": lambda **kw: _transformer("streaming", **kw),
}


@pytest.mark.parametrize("build", MODULES.values(), ids=MODULES.keys())
def test_observation_critic_ignores_memory_and_leaves_the_trunk_alone(build) -> None:
    module = build(critic_input="observation")
    obs = _obs(module, 3, 4)
    calm, stirred = _batch(module, obs, 3), _batch(module, obs, 3, state_noise=1.0)
    out = module.forward_train(calm)
    values = module.compute_values(calm, embeddings=out[Columns.EMBEDDINGS])
    assert values.shape == (3, 4)
    # Without embeddings (the GAE connector's call) the same values, whatever the state.
    torch.testing.assert_close(module.compute_values(stirred), values)
    if isinstance(module, TransformerLSTMModule):  # the opponent's newest frame counts
        moved = {**obs, "opponent_history": obs["opponent_history"] + 1.0}
        assert not torch.allclose(module.compute_values(_batch(module, moved, 3)), values)
    policy_differs = module.forward_train(stirred)[Columns.ACTION_DIST_INPUTS]
    assert not torch.allclose(policy_differs, out[Columns.ACTION_DIST_INPUTS])
    values.square().mean().backward()
    trunk = [p for name, p in module.net.named_parameters() if "actor" not in name]
    assert trunk and all(p.grad is None or not p.grad.any() for p in trunk)
    assert all(p.grad is not None and p.grad.any() for p in module.critic.parameters())


@pytest.mark.parametrize("build", MODULES.values(), ids=MODULES.keys())
def test_memory_critic_shares_the_trunk(build) -> None:
    module = build()
    obs = _obs(module, 3, 4)
    batch = _batch(module, obs, 3)
    values = module.compute_values(batch)
    torch.testing.assert_close(
        module.compute_values(batch, embeddings=module.forward_train(batch)[Columns.EMBEDDINGS]),
        values,
    )
    assert not torch.allclose(
        module.compute_values(_batch(module, obs, 3, state_noise=1.0)), values
    )
    values.square().mean().backward()
    assert module.net.lstm.lstm.weight_ih_l0.grad.any()


@pytest.mark.parametrize("build", MODULES.values(), ids=MODULES.keys())
def test_lstm_skip_reaches_the_heads_past_a_shut_lstm(build) -> None:
    shut, skipped = build(), build(lstm_skip=True)
    for module in (shut, skipped):
        with torch.no_grad():  # output gate bias -> -inf: the LSTM's output is 0
            lstm = module.net.lstm.lstm
            lstm.bias_ih_l0[3 * lstm.hidden_size :] = -1.0e4
    obs = _obs(shut, 2, 3)
    other = _obs(shut, 2, 3)

    def logits(module, observation):
        return module.forward_train(_batch(module, observation, 2))[Columns.ACTION_DIST_INPUTS]

    torch.testing.assert_close(logits(shut, obs), logits(shut, other))
    assert not torch.allclose(logits(skipped, obs), logits(skipped, other))
    width = skipped.net.lstm.cell_size + skipped.net.lstm.lstm.input_size
    assert skipped.forward_train(_batch(skipped, obs, 2))[Columns.EMBEDDINGS].shape[-1] == width


def test_opponent_prediction_head_only_with_a_weight() -> None:
    plain = _transformer("streaming")
    batch = _batch(plain, _obs(plain, 2, 3), 2)
    assert "opponent_prediction" not in plain.forward_train(batch)
    assert plain.net.opponent_head is None
    predicting = _transformer("streaming", opponent_prediction=0.5)
    out = predicting.forward_train(_batch(predicting, _obs(predicting, 2, 3), 2))
    assert out["opponent_prediction"].shape == (2, 3, 4)  # one opponent frame per step


def test_opponent_action_head_only_with_a_weight_and_reads_the_lstm_input() -> None:
    plain = _transformer("streaming", lstm_skip=True)
    assert "opponent_action_logits" not in plain.forward_train(_batch(plain, _obs(plain, 2, 3), 2))
    assert plain.net.opponent_action_head is None
    inferring = _transformer("streaming", lstm_skip=True, opponent_action=0.5)
    obs = _obs(inferring, 2, 3)
    calm = _batch(inferring, obs, 2)
    logits = inferring.forward_train(calm)["opponent_action_logits"]
    assert logits.shape == (2, 3, ACTIONS.n)  # one guess of the opponent's action per step
    # It reads what the current frame and the history show, not the LSTM's memory.
    stirred = _batch(inferring, obs, 2, state_noise=1.0)
    torch.testing.assert_close(inferring.forward_train(stirred)["opponent_action_logits"], logits)


def test_opponent_action_head_on_memory_reads_the_lstm_state() -> None:
    inferring = _transformer(
        "streaming", lstm_skip=True, opponent_action=0.5, opponent_action_input="memory"
    )
    obs = _obs(inferring, 2, 3)
    logits = inferring.forward_train(_batch(inferring, obs, 2))["opponent_action_logits"]
    assert logits.shape == (2, 3, ACTIONS.n)
    # It reads what the policy head reads, the LSTM's memory included.
    stirred = inferring.forward_train(_batch(inferring, obs, 2, state_noise=1.0))
    assert not torch.allclose(stirred["opponent_action_logits"], logits)
