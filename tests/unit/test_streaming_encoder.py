"""Streaming opponent encoder: acting one step at a time equals learning on chunks (no Ray)."""

import itertools

import gymnasium as gym
import numpy as np
import pytest
import torch

from rl_platform.nets.blocks import count_parameters
from rl_platform.nets.streaming_encoder import (
    SlidingWindow,
    StreamingEncoder,
    rotary_tables,
    rotate,
)
from rl_platform.nets.transformer_lstm_net import (
    KV_VALID_KEY,
    POSITION_KEY,
    StreamingTransformerLSTMNet,
    TransformerLSTMNet,
    kv_key,
    transformer_lstm_net_for,
)
from rl_platform.sampling.model_inputs import model_inputs_for
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

# H = 4 so that episodes outrun the window; 4 query heads share 2 key/value heads (GQA).
SMALL = TransformerLSTMModelSpec(
    history=4, encoder="streaming", layers=2, heads=4, kv_heads=2, d_model=16,
    lstm_cell_size=12, actor=(8,), critic=(8,), obs_encoder=(8,),
)  # fmt: skip
OBS_DIM, FRAME_DIM = 5, 3
TOL = {"atol": 1e-5, "rtol": 1e-5}


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def _net(config: TransformerLSTMModelSpec = SMALL) -> StreamingTransformerLSTMNet:
    return StreamingTransformerLSTMNet(
        obs_dim=OBS_DIM, frame_dim=FRAME_DIM, action_space=gym.spaces.Discrete(3), config=config
    )


def _initial(net: StreamingTransformerLSTMNet, rows: int) -> dict[str, torch.Tensor]:
    return {k: v.expand(rows, *v.shape).clone() for k, v in net.initial_state().items()}


def _steps(rows: int, steps: int) -> dict[str, torch.Tensor]:
    """Connector output of the streaming encoder: one frame per step, always real."""
    return {
        "obs": torch.randn(rows, steps, OBS_DIM),
        "opponent_history": torch.randn(rows, steps, 1, FRAME_DIM),
        "history_mask": torch.ones(rows, steps, 1),
    }


def _act(net, inputs, starts):
    """Step by step as an env runner does; `starts[b, t]`: an episode starts (state reset).

    Returns embeddings [B, T, C] and the state before each step (per key [B, T, ...])."""
    rows, steps = starts.shape
    initial, state = _initial(net, rows), _initial(net, rows)
    embeddings, before = [], []
    with torch.no_grad():
        for t in range(steps):
            reset = starts[:, t]
            state = {k: torch.where(_rows(reset, v), initial[k], v) for k, v in state.items()}
            before.append(state)
            step = {k: v[:, t : t + 1] for k, v in inputs.items()}
            emb, state = net.encode(step, state)
            embeddings.append(emb)
    stacked = {k: torch.stack([s[k] for s in before], 1) for k in state}
    return torch.cat(embeddings, 1), stacked, state


def _rows(flags: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return flags.view(-1, *[1] * (like.dim() - 1))


def _chunks(starts: np.ndarray, max_seq_len: int) -> list[tuple[int, int, int]]:
    """(row, first step, length) of every learner chunk: episodes cut every max_seq_len steps,
    as RLlib's AddTimeDimToBatchAndZeroPad does."""
    out = []
    for row, flags in enumerate(starts):
        bounds = [*np.flatnonzero(flags).tolist(), len(flags)]
        for begin, end in itertools.pairwise(bounds):
            out += [(row, s, min(max_seq_len, end - s)) for s in range(begin, end, max_seq_len)]
    return out


def _learner_batch(inputs, state_before, chunks, max_seq_len):
    """Zero-padded [chunks, max_seq_len] inputs, STATE_IN at each chunk start, seq_lens."""
    batch = {k: torch.zeros(len(chunks), max_seq_len, *v.shape[2:]) for k, v in inputs.items()}
    for i, (row, start, length) in enumerate(chunks):
        for key, value in inputs.items():
            batch[key][i, :length] = value[row, start : start + length]
    state_in = {k: torch.stack([v[r, s] for r, s, _ in chunks]) for k, v in state_before.items()}
    return batch, state_in, torch.tensor([length for _, _, length in chunks])


def test_rotary_scores_depend_only_on_distance() -> None:
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)

    def score(query_at: int, key_at: int) -> torch.Tensor:
        qr = rotate(q, rotary_tables(torch.tensor([[query_at]]), 8))
        kr = rotate(k, rotary_tables(torch.tensor([[key_at]]), 8))
        return (qr * kr).sum()

    torch.testing.assert_close(score(3, 1), score(100_002, 100_000))
    assert not torch.allclose(score(3, 1), score(3, 2))


def test_a_token_sees_exactly_the_last_history_frames() -> None:
    # One layer: token t attends to frames t - H + 1 .. t, the window encoder's frames.
    history, steps = 4, 9
    enc = StreamingEncoder(frame_dim=FRAME_DIM, d_model=16, layers=1, heads=4, kv_heads=2)
    caches = [torch.zeros(1, 2, 2, history - 1, 4) for _ in range(enc.slots)]
    window = SlidingWindow.build(
        cache_valid=torch.zeros(1, history - 1, dtype=torch.bool),
        token_valid=torch.ones(1, steps, dtype=torch.bool),
        position=torch.zeros(1),
        head_dim=4,
        groups=2,
    )
    frames = torch.randn(1, steps, FRAME_DIM)
    _, tokens, _ = enc(frames, caches, window)
    older, oldest_seen = frames.clone(), frames.clone()
    older[0, 8 - history] += 1.0
    oldest_seen[0, 8 - history + 1] += 1.0
    torch.testing.assert_close(enc(older, caches, window)[1][0, 8], tokens[0, 8])
    assert not torch.allclose(enc(oldest_seen, caches, window)[1][0, 8], tokens[0, 8])


def test_acting_step_by_step_equals_learning_on_chunks() -> None:
    """The required guarantee: fp32, across episode starts (empty cache, the streaming form
    of a left-padded window) and zero-padded chunk tails."""
    net, max_seq_len = _net(), 4
    starts = np.zeros((3, 15), bool)
    starts[:, 0] = True
    starts[0, 6] = starts[1, 11] = starts[2, 5] = starts[2, 9] = True
    inputs = _steps(3, 15)
    acted, state_before, _ = _act(net, inputs, torch.as_tensor(starts))
    chunks = _chunks(starts, max_seq_len)
    batch, state_in, seq_lens = _learner_batch(inputs, state_before, chunks, max_seq_len)
    learned, state_out = net.encode(batch, state_in, seq_lens)
    for i, (row, start, length) in enumerate(chunks):
        torch.testing.assert_close(learned[i, :length], acted[row, start : start + length], **TOL)
        end = start + length
        if end < starts.shape[1] and not starts[row, end]:
            for key, value in state_out.items():
                torch.testing.assert_close(value[i], state_before[key][row, end], **TOL)


def test_invalid_cache_slots_are_ignored() -> None:
    net = _net()
    inputs = _steps(2, 3)
    clean = _initial(net, 2)
    noisy = {k: torch.randn_like(v) * 10 if k.startswith("kv_") else v for k, v in clean.items()}
    noisy[KV_VALID_KEY] = clean[KV_VALID_KEY]
    torch.testing.assert_close(net.encode(inputs, noisy)[0], net.encode(inputs, clean)[0])
    # Validity shifts in with each real frame: after 2 steps the 2 newest entries hold one.
    _, state = net.encode(inputs, clean, torch.tensor([2, 3]))
    assert state[KV_VALID_KEY].tolist() == [[0.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    assert state[POSITION_KEY].tolist() == [[2.0], [3.0]]


def test_padded_steps_keep_gradients_finite_and_out_of_the_cache() -> None:
    net = _net()
    inputs = _steps(2, 4)
    for value in inputs.values():
        value[1, 2:] = 0.0  # zero padding as RLlib's time-dim connector produces
    emb, state_out = net.encode(inputs, _initial(net, 2), seq_lens=torch.tensor([4, 2]))
    (net.policy(emb, None)[0].sum() + net.value(emb)[1, :2].sum()).backward()
    grads = [p.grad for p in net.parameters() if p.grad is not None]
    assert grads and all(torch.isfinite(g).all() for g in grads)
    assert not state_out[kv_key(0)].requires_grad  # the next cache is data, like STATE_IN


def test_one_frame_history_has_an_empty_cache() -> None:
    net = _net(SMALL.model_copy(update={"history": 1}))
    state = _initial(net, 2)
    assert state[kv_key(3)].shape == (2, 2, 2, 0, 4)
    emb, state_out = net.encode(_steps(2, 3), state, torch.tensor([3, 1]))
    assert emb.shape == (2, 3, 12) and state_out[kv_key(3)].shape == (2, 2, 2, 0, 4)


def test_reference_size_parameters_and_state() -> None:
    window_config, _ = TransformerLSTMModelSpec.from_model_config({})
    config = window_config.model_copy(update={"encoder": "streaming"})
    kwargs = {"obs_dim": 32, "frame_dim": 32, "action_space": gym.spaces.Discrete(10)}
    window = transformer_lstm_net_for(config=window_config, **kwargs)
    streaming = transformer_lstm_net_for(config=config, **kwargs)
    assert isinstance(window, TransformerLSTMNet)
    assert isinstance(streaming, StreamingTransformerLSTMNet)
    # Same layers; only the window's learned positions (90 x 256) are gone.
    assert count_parameters(window) - count_parameters(streaming) == 90 * 256
    # 6 layers + pooling + cross-attention; keys and values of 2 heads x 32, 89 tokens each.
    state = streaming.initial_state()
    assert {k for k in state if k.startswith("kv_")} == {kv_key(i) for i in range(8)} | {
        KV_VALID_KEY
    }
    assert state[kv_key(7)].shape == (2, 2, 89, 32)


def test_streaming_reads_one_frame_per_observation() -> None:
    assert SMALL.input_frames == 1
    assert SMALL.model_copy(update={"encoder": "window"}).input_frames == 4
    split = {"self": [0, 2], "opponent": [2, 4]}
    inputs = model_inputs_for(SMALL.model_copy(update={"obs_split": split}).opponent_history())
    assert inputs.history == 1
    with pytest.raises(ValueError, match="even head size"):
        TransformerLSTMModelSpec(encoder="streaming", d_model=24, heads=8)


def _sequences_with_resets(inputs, state_before, starts, seq_len):
    """The array learner's form: every row cut at 0, L, 2L, ... whatever the episodes, the
    state before each cut as STATE_IN, episode starts inside a sequence as resets."""
    rows, steps = starts.shape
    cuts = [(row, s) for s in range(0, steps, seq_len) for row in range(rows)]
    batch = {k: torch.stack([v[r, s : s + seq_len] for r, s in cuts]) for k, v in inputs.items()}
    state_in = {k: torch.stack([v[r, s] for r, s in cuts]) for k, v in state_before.items()}
    resets = torch.stack([torch.as_tensor(starts[r, s : s + seq_len]) for r, s in cuts])
    resets[:, 0] = False  # a sequence's start state is already the new episode's
    return cuts, batch, state_in, resets


@pytest.mark.parametrize("encoder", ["streaming", "window"])
def test_acting_step_by_step_equals_learning_on_sequences_with_resets(encoder: str) -> None:
    """The array learner's sequences hold episode starts: the streaming window masks keys of
    earlier episodes and counts positions from 0 there, the LSTM restarts from zeros."""
    config = SMALL.model_copy(update={"encoder": encoder})
    net, seq_len = (
        transformer_lstm_net_for(
            obs_dim=OBS_DIM, frame_dim=FRAME_DIM, action_space=gym.spaces.Discrete(3), config=config
        ),
        5,
    )
    starts = np.zeros((3, 15), bool)
    starts[:, 0] = True
    starts[0, 6] = starts[1, 11] = starts[2, 5] = starts[2, 8] = starts[2, 9] = True
    inputs = _steps(3, 15)
    if encoder == "window":  # the window encoder reads the whole history window per step
        inputs = _windows(inputs, starts, SMALL.history)
    acted, state_before, _ = _act(net, inputs, torch.as_tensor(starts))
    cuts, batch, state_in, resets = _sequences_with_resets(inputs, state_before, starts, seq_len)
    learned, _ = net.encode(batch, state_in, None, resets)
    for i, (row, start) in enumerate(cuts):
        torch.testing.assert_close(learned[i], acted[row, start : start + seq_len], **TOL)


def _windows(inputs, starts, history):
    """Per-step windows of the last `history` frames of the episode (left zero-padded)."""
    rows, steps = starts.shape
    frames = inputs["opponent_history"][:, :, -1]
    windows = torch.zeros(rows, steps, history, FRAME_DIM)
    mask = torch.zeros(rows, steps, history)
    for row in range(rows):
        begin = 0
        for t in range(steps):
            begin = t if starts[row, t] else begin
            seen = frames[row, max(begin, t - history + 1) : t + 1]
            windows[row, t, history - len(seen) :] = seen
            mask[row, t, history - len(seen) :] = 1.0
    return {"obs": inputs["obs"], "opponent_history": windows, "history_mask": mask}
