"""Strategy encoder, attention blocks and the transformer_lstm net (plain torch, no Ray)."""

import math

import gymnasium as gym
import pytest
import torch

from rl_platform.nets.blocks import count_parameters
from rl_platform.nets.transformer import (
    MultiHeadAttention,
    StrategyEncoder,
    ensure_one_valid,
    key_padding,
)
from rl_platform.nets.transformer_lstm_net import TransformerLSTMNet
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

SMALL = TransformerLSTMModelSpec(
    history=6, layers=2, heads=2, d_model=16, lstm_cell_size=12, actor=(8,), critic=(8,),
    obs_encoder=(8,),
)  # fmt: skip


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def _inputs(b: int, t: int, h: int = 6, obs_dim: int = 5, frame_dim: int = 3) -> dict:
    mask = torch.ones(b, t, h)
    mask[0, :, :2] = 0.0  # row 0 has two padded slots at the front
    return {
        "obs": torch.randn(b, t, obs_dim),
        "opponent_history": torch.randn(b, t, h, frame_dim) * mask.unsqueeze(-1),
        "history_mask": mask,
    }


def _small_net(space: gym.Space | None = None) -> TransformerLSTMNet:
    return TransformerLSTMNet(
        obs_dim=5, frame_dim=3, action_space=space or gym.spaces.Discrete(3), config=SMALL
    )


def test_attention_matches_reference_with_key_padding() -> None:
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(3, 4, 8)
    valid = torch.tensor([[True] * 4, [False, True, True, True], [False, False, False, True]])
    out = mha(x, valid=valid)
    q = mha.q(x).view(3, 4, 2, 4).transpose(1, 2)
    k, v = (t.view(3, 4, 2, 4).transpose(1, 2) for t in mha.kv(x).chunk(2, -1))
    scores = q @ k.transpose(-1, -2) / math.sqrt(4)
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    ref = (scores.softmax(-1) @ v).transpose(1, 2).reshape(3, 4, 8)
    torch.testing.assert_close(out, mha.out(ref))


def test_grouped_query_attention_matches_repeated_key_value_heads() -> None:
    mha = MultiHeadAttention(8, 4, kv_heads=2)
    x, context = torch.randn(3, 2, 8), torch.randn(3, 5, 8)
    valid = torch.tensor([[True] * 5, [False, True, True, True, True], [False] * 4 + [True]])
    out = mha(x, context=context, valid=valid)
    q = mha.q(x).view(3, 2, 4, 2).transpose(1, 2)
    # Query heads 0, 1 read key/value head 0; heads 2, 3 read head 1.
    k, v = (
        t.view(3, 5, 2, 2).transpose(1, 2).repeat_interleave(2, dim=1)
        for t in mha.kv(context).chunk(2, -1)
    )
    scores = (q @ k.transpose(-1, -2) / math.sqrt(2)).masked_fill(
        ~valid[:, None, None, :], float("-inf")
    )
    ref = (scores.softmax(-1) @ v).transpose(1, 2).reshape(3, 2, 8)
    torch.testing.assert_close(out, mha.out(ref))
    with pytest.raises(ValueError, match="kv_heads"):
        MultiHeadAttention(8, 4, kv_heads=3)


def test_ensure_one_valid_and_key_padding() -> None:
    valid = torch.tensor([[False, False, False], [True, False, True]])
    fixed = ensure_one_valid(valid)
    assert fixed.tolist() == [[False, False, True], [True, False, True]]
    assert key_padding(torch.ones(2, 3, dtype=torch.bool)) is None
    assert key_padding(valid) is not None


def test_strategy_encoder_ignores_padded_frames() -> None:
    enc = StrategyEncoder(frame_dim=3, history=5, d_model=16, layers=2, heads=4)
    frames = torch.randn(2, 5, 3)
    valid = torch.tensor([[False, False, True, True, True]] * 2)
    latent, tokens = enc(frames, key_padding(valid))
    assert latent.shape == (2, 16) and tokens.shape == (2, 5, 16)
    changed = frames.clone()
    changed[:, :2] = 99.0  # only padded slots change
    latent2, _ = enc(changed, key_padding(valid))
    torch.testing.assert_close(latent, latent2)
    changed[:, 4] += 1.0  # a real frame changes -> the latent must change
    latent3, _ = enc(changed, key_padding(valid))
    assert not torch.allclose(latent, latent3)


def test_net_shapes_and_step_equals_sequence() -> None:
    net = _small_net(gym.spaces.MultiDiscrete([2, 3]))
    inputs = _inputs(2, 4)
    state = {k: v.expand(2, -1) for k, v in net.initial_state().items()}
    emb, full_state = net.encode(inputs, state)
    assert emb.shape == (2, 4, 12) and net.policy(emb, None).shape == (2, 4, 5)
    step_state, steps = state, []
    for t in range(4):
        step = {k: v[:, t : t + 1] for k, v in inputs.items()}
        e, step_state = net.encode(step, step_state)
        steps.append(e)
    torch.testing.assert_close(torch.cat(steps, 1), emb)
    torch.testing.assert_close(step_state["c"], full_state["c"])


def test_zero_padded_time_steps_keep_gradients_finite() -> None:
    net = _small_net()
    inputs = _inputs(2, 4)
    for value in inputs.values():
        value[1, 2:] = 0.0  # zero padding as RLlib's time-dim connector produces
    state = {k: v.expand(2, -1) for k, v in net.initial_state().items()}
    emb, _ = net.encode(inputs, state, seq_lens=torch.tensor([4, 2]))
    loss = net.policy(emb, None)[0].sum() + net.value(emb)[1, :2].sum()
    loss.backward()
    grads = [p.grad for p in net.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)


def test_history_length_mismatch_raises() -> None:
    net = _small_net()
    inputs = _inputs(1, 1, h=4)
    state = {k: v.expand(1, -1) for k, v in net.initial_state().items()}
    with pytest.raises(ValueError, match="expects 6"):
        net.encode(inputs, state)


def test_bf16_precision_is_noop_on_cpu() -> None:
    net = _small_net()
    bf16 = TransformerLSTMNet(
        obs_dim=5,
        frame_dim=3,
        action_space=gym.spaces.Discrete(3),
        config=SMALL.model_copy(update={"precision": "bf16"}),
    )
    bf16.load_state_dict(net.state_dict())
    inputs = _inputs(2, 3)
    state = {k: v.expand(2, -1) for k, v in net.initial_state().items()}
    torch.testing.assert_close(bf16.encode(inputs, state)[0], net.encode(inputs, state)[0])


def test_default_size_parameter_count() -> None:
    config, _ = TransformerLSTMModelSpec.from_model_config({})
    # The duel's sizes: 64-wide observation split into own [0, 32] and opponent [32, 64].
    net = TransformerLSTMNet(
        obs_dim=32, frame_dim=32, action_space=gym.spaces.Discrete(10), config=config
    )
    # The "about 4M" (docs/modules.md has the breakdown: 4.04M).
    assert 3_500_000 < count_parameters(net) < 4_500_000
    # LSTM input is d_model (256), not the 512-wide concat: 4 gates * cell * (in + cell) + biases.
    assert count_parameters(net.lstm) == 4 * 512 * (256 + 512) + 2 * 4 * 512
    # Grouped-query attention: 2 key/value heads of 32 for the 8 query heads.
    assert net.strategy.blocks[0].attn.kv.out_features == 2 * 2 * 32


def test_the_size_line_is_logged_once_for_a_league_of_equal_nets() -> None:
    from loguru import logger

    lines: list[str] = []
    sink = logger.add(lambda message: lines.append(str(message)), level="INFO")
    try:
        # A distinct size, so an earlier test's net of the same size does not hide the line.
        space = gym.spaces.Discrete(7)
        for _ in range(4):  # main, two opponent slots, a teacher
            _small_net(space)
    finally:
        logger.remove(sink)
    sizes = [line for line in lines if "transformer_lstm (" in line]
    assert len(sizes) == 1, sizes
    assert f"{count_parameters(_small_net(space)):,} parameters" in sizes[0]
