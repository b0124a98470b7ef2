"""Plain-torch building blocks: MLP, LSTM core, heads, masking, LSTM net, model configs."""

import gymnasium as gym
import numpy as np
import pytest
import torch

from rl_platform.base.errors import SpecError
from rl_platform.nets.blocks import (
    MLP,
    ActionHead,
    LSTMCore,
    ValueHead,
    action_dist_input_dim,
    apply_action_mask,
)
from rl_platform.nets.lstm_net import LSTMActorCriticNet
from rl_platform.spec.model_types.lstm import LSTMModelSpec
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

ACTION_SPACES = [
    gym.spaces.Discrete(4),
    gym.spaces.MultiDiscrete([2, 3, 4]),
    gym.spaces.Box(-1.0, 1.0, (3,), np.float32),
]


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def test_mlp_shapes_and_identity_when_empty() -> None:
    mlp = MLP(5, [7, 11], activation="tanh")
    assert mlp(torch.randn(2, 3, 5)).shape == (2, 3, 11)
    assert mlp.out_dim == 11
    x = torch.randn(4, 5)
    assert torch.equal(MLP(5, []).forward(x), x)
    with pytest.raises(ValueError, match="unknown activation"):
        MLP(5, [3], activation="swishy")


def test_lstm_core_step_by_step_equals_sequence() -> None:
    core = LSTMCore(6, 8)
    x = torch.randn(3, 7, 6)
    state = core.initial_state(3)
    full, full_state = core(x, state)
    step_state, outs = state, []
    for t in range(7):
        out, step_state = core(x[:, t : t + 1], step_state)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=1), full)
    torch.testing.assert_close(step_state[0], full_state[0])
    torch.testing.assert_close(step_state[1], full_state[1])


@pytest.mark.parametrize("seq_lens", [None, torch.tensor([2, 3])])
def test_lstm_core_hands_cudnn_a_contiguous_state(seq_lens) -> None:
    # cuDNN raises "rnn: hx is not contiguous" for an expanded state (seen on an H200); the
    # CPU kernel accepts one, so this checks what nn.LSTM receives rather than a crash.
    core = LSTMCore(4, 5)
    seen = []
    core.lstm.register_forward_pre_hook(lambda _m, args: seen.append(args[1]))
    zeros = torch.zeros(5)
    core(torch.randn(2, 3, 4), (zeros.expand(2, -1), zeros.expand(2, -1)), seq_lens)
    assert seen and all(part.is_contiguous() for part in seen[0])


def test_lstm_core_seq_lens_ignores_padding() -> None:
    core = LSTMCore(4, 5)
    x = torch.randn(2, 6, 4)
    x[0, 3:] = 123.0  # garbage in the padded tail of row 0
    seq_lens = torch.tensor([3, 6])
    out, (h, c) = core(x, core.initial_state(2), seq_lens)
    ref_out, (ref_h, ref_c) = core(x[:1, :3], core.initial_state(1))
    torch.testing.assert_close(out[:1, :3], ref_out)
    torch.testing.assert_close(h[:1], ref_h)
    torch.testing.assert_close(c[:1], ref_c)
    assert torch.all(out[0, 3:] == 0.0)
    # Without seq_lens the padded garbage would leak into the returned state.
    _, (h_nopack, _) = core(x, core.initial_state(2))
    assert not torch.allclose(h_nopack[0], ref_h[0])


@pytest.mark.parametrize("space", ACTION_SPACES, ids=lambda s: type(s).__name__)
def test_action_head_shapes(space: gym.Space) -> None:
    head = ActionHead(16, space, hidden=[8])
    out = head(torch.randn(2, 5, 16))
    assert out.shape == (2, 5, action_dist_input_dim(space))


def test_gaussian_log_std_is_state_independent_parameter() -> None:
    head = ActionHead(4, gym.spaces.Box(-1, 1, (3,)), initial_log_std=-0.5)
    out = head(torch.randn(10, 4))
    mean, log_std = out.chunk(2, dim=-1)
    assert torch.all(log_std == -0.5)
    assert mean.std(dim=0).min() > 0  # means do depend on the input
    assert head.log_std is not None and head.log_std.requires_grad


def test_value_head_squeezes() -> None:
    assert ValueHead(8, hidden=[4])(torch.randn(3, 2, 8)).shape == (3, 2)


def test_masked_actions_never_sampled() -> None:
    logits = torch.randn(6, 5) * 3
    mask = torch.tensor([[1, 0, 1, 0, 0]] * 3 + [[0, 0, 0, 0, 1]] * 3, dtype=torch.float32)
    masked = apply_action_mask(logits, mask)
    samples = torch.distributions.Categorical(logits=masked).sample((4000,))
    allowed = mask.bool()[torch.arange(6).expand(4000, 6), samples]
    assert allowed.all()
    assert torch.isfinite(torch.log_softmax(masked, -1)).all()


def test_mask_gives_zero_gradient_and_no_nan_when_all_masked() -> None:
    logits = torch.randn(2, 3, requires_grad=True)
    mask = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    dist = torch.distributions.Categorical(logits=apply_action_mask(logits, mask))
    loss = -(dist.log_prob(torch.tensor([0, 1])) + dist.entropy()).sum()
    loss.backward()
    assert torch.isfinite(loss)
    assert logits.grad is not None and torch.all(logits.grad[0, 1] == 0)
    torch.testing.assert_close(dist.probs[1], torch.full((3,), 1 / 3))


def test_mask_works_in_bf16_and_checks_width() -> None:
    logits = torch.randn(2, 3, dtype=torch.bfloat16)
    masked = apply_action_mask(logits, torch.tensor([[1.0, 0.0, 1.0]] * 2))
    assert masked.dtype == torch.bfloat16
    assert masked[0, 1] == torch.finfo(torch.bfloat16).min
    with pytest.raises(ValueError, match="action_mask has 2 entries"):
        apply_action_mask(logits, torch.ones(2, 2))


def test_lstm_net_sequence_equals_steps() -> None:
    config = LSTMModelSpec(encoder=(8,), lstm_cell_size=12, actor=(6,), critic=(6,))
    net = LSTMActorCriticNet(obs_dim=4, action_space=gym.spaces.Discrete(3), config=config)
    obs = torch.randn(2, 5, 4)
    state = {k: v.expand(2, -1) for k, v in net.initial_state().items()}
    emb, full_state = net.encode(obs, state)
    step_state, steps = state, []
    for t in range(5):
        e, step_state = net.encode(obs[:, t : t + 1], step_state)
        steps.append(net.policy(e, None))
    torch.testing.assert_close(torch.cat(steps, 1), net.policy(emb, None))
    torch.testing.assert_close(step_state["h"], full_state["h"])
    assert net.value(emb).shape == (2, 5)


def test_lstm_config_defaults_unknown_keys_and_nested_settings() -> None:
    config, unknown = LSTMModelSpec.from_model_config(
        {"vf_share_layers": False, "settings": {"lstm_cell_size": 64}}
    )
    assert config.lstm_cell_size == 64
    assert config.encoder == [256] and config.actor == [96, 96] and config.max_seq_len == 32
    assert unknown == ["vf_share_layers"]
    assert config.settings["encoder"] == [256]


def test_config_errors_are_spec_errors() -> None:
    with pytest.raises(SpecError) as err:
        LSTMModelSpec.from_model_config({"lstm_cell_size": 0, "actor": [96, "x"]})
    assert len(err.value.problems) == 2
    with pytest.raises(SpecError, match="divisible"):
        TransformerLSTMModelSpec.from_model_config({"d_model": 30, "heads": 8})
    with pytest.raises(SpecError, match="precision"):
        TransformerLSTMModelSpec.from_model_config({"precision": "fp16"})
    with pytest.raises(SpecError, match="kv_heads"):
        TransformerLSTMModelSpec.from_model_config({"heads": 8, "kv_heads": 3})


def test_key_value_heads_default_divides_heads() -> None:
    for heads, expected in ((8, 2), (2, 2), (1, 1), (3, 1)):
        config, _ = TransformerLSTMModelSpec.from_model_config({"heads": heads, "d_model": 24})
        assert config.key_value_heads == expected
    config, _ = TransformerLSTMModelSpec.from_model_config({"heads": 8, "kv_heads": 8})
    assert config.key_value_heads == 8


def test_the_written_out_lstm_step_equals_the_lstm_kernel() -> None:
    """What a captured CUDA graph runs instead of cuDNN's kernel (LSTMCore._cell_step)."""
    torch.manual_seed(0)
    core = LSTMCore(6, 5)
    x = torch.randn(3, 1, 6)
    state = (torch.randn(3, 5), torch.randn(3, 5))
    out, (h, c) = core(x, state)
    out_step, (h_step, c_step) = core._cell_step(x, state)
    for got, expected in ((out_step, out), (h_step, h), (c_step, c)):
        torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-6)
