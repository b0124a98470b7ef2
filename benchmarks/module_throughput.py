"""Throughput of the transformer_lstm network: vs a plain PyTorch reference, and window vs
streaming opponent encoder.

Pure torch (no Ray import). Two tables, both at the reference defaults (H 90, 6 layers,
8 heads, d_model 256, LSTM 512) with the duel's sizes:

1. Forward+backward vs a reference of the same shape: strategy transformer over the last H
   opponent frames of every (batch, time) step, attention pooling / cross-attention, concat
   -> d_model projection, LSTM over time, actor and critic heads. The reference uses stock
   `nn.TransformerEncoder`, `nn.MultiheadAttention` and `nn.LSTM` in fp32 eager mode. Stock
   attention has no grouped key/value heads, so the reference's K/V projections are
   full-width (more parameters, same attention shapes); the rows compare time, not
   parameter counts. Throughput counts samples = batch * seq steps per fwd+bwd pass. The
   `streaming` rows run the same samples as one chunk per sequence after a full key/value
   cache (what the learner does mid-episode); `--padded` pads only the windowed rows.
2. `encoder: window` vs `encoder: streaming` (rl_platform/nets/streaming_encoder.py):
   rollout inference per agent step (`--seats` rows, T = 1, no_grad, the state carried
   from call to call; streaming starts from a full key/value cache, i.e. mid-episode) and
   learner forward+backward per sequence chunk (`--batch` chunks of `--seq` steps, the
   streaming chunk starting from a full cache), plus parameter counts.

    uv run python -m benchmarks.module_throughput --device cpu --quick    # sanity, < 1 min
    uv run python -m benchmarks.module_throughput --device cpu --batch 8 --iters 3 --threads 1
    uv run python -m benchmarks.module_throughput --device cuda          # fp32 and bf16
    uv run python -m benchmarks.module_throughput --device cpu --only encoders
"""

import argparse
import time
from collections.abc import Callable

import gymnasium as gym
import torch
from torch import nn

from rl_platform.nets.blocks import count_parameters
from rl_platform.nets.transformer_lstm_net import (
    KV_VALID_KEY,
    TransformerLSTMBase,
    transformer_lstm_net_for,
)
from rl_platform.spec.model_types.transformer_lstm import TransformerLSTMModelSpec

# The duel's sizes: 64-wide observation split into own [0, 32] and opponent [32, 64].
OBS_DIM = 32
FRAME_DIM = 32
ACTIONS = 10


class ReferenceNet(nn.Module):
    """Same shapes as TransformerLSTMNet, built from stock PyTorch modules."""

    def __init__(self, config: TransformerLSTMModelSpec) -> None:
        super().__init__()
        d = config.d_model
        self.embed = nn.Linear(FRAME_DIM, d)
        self.position = nn.Parameter(torch.zeros(1, config.history, d))
        layer = nn.TransformerEncoderLayer(
            d, config.heads, dim_feedforward=config.ffn_mult * d, dropout=0.0,
            activation="gelu", batch_first=True, norm_first=True,
        )  # fmt: skip
        self.encoder = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
        self.pool_query = nn.Parameter(torch.zeros(1, 1, d))
        self.pool = nn.MultiheadAttention(d, config.heads, batch_first=True)
        hidden = config.obs_encoder[0]
        self.obs_mlp = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, d))
        self.cross = nn.MultiheadAttention(d, config.heads, batch_first=True)
        self.merge = nn.Linear(2 * d, d)
        self.lstm = nn.LSTM(d, config.lstm_cell_size, batch_first=True)
        self.actor = _head(config.lstm_cell_size, config.actor, ACTIONS)
        self.critic = _head(config.lstm_cell_size, config.critic, 1)

    def forward(self, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        obs, frames, mask = inputs["obs"], inputs["opponent_history"], inputs["history_mask"]
        b, t, h, _ = frames.shape
        pad = mask.reshape(b * t, h) < 0.5  # True = ignore, nn.Transformer's convention
        x = self.embed(frames.reshape(b * t, h, -1)) + self.position
        tokens = self.encoder(x, src_key_padding_mask=pad)
        query = self.pool_query.expand(b * t, -1, -1)
        latent, _ = self.pool(query, tokens, tokens, key_padding_mask=pad, need_weights=False)
        f = self.obs_mlp(obs.reshape(b * t, 1, -1))
        f = f + self.cross(f, tokens, tokens, key_padding_mask=pad, need_weights=False)[0]
        merged = self.merge(torch.cat([f.squeeze(1), latent.squeeze(1)], -1))
        out, _ = self.lstm(merged.view(b, t, -1))
        return self.actor(out), self.critic(out).squeeze(-1)


def _head(in_dim: int, hidden: tuple[int, ...], out: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in hidden:
        layers += [nn.Linear(in_dim, size), nn.ReLU()]
        in_dim = size
    return nn.Sequential(*layers, nn.Linear(in_dim, out))


def make_inputs(batch: int, seq: int, history: int, device: str) -> dict[str, torch.Tensor]:
    """Random inputs; every window is full (mid-episode steady state) unless --padded."""
    return {
        "obs": torch.randn(batch, seq, OBS_DIM, device=device),
        "opponent_history": torch.randn(batch, seq, history, FRAME_DIM, device=device),
        "history_mask": torch.ones(batch, seq, history, device=device),
    }


def reference_step(net: ReferenceNet) -> Callable[[dict[str, torch.Tensor]], torch.Tensor]:
    def step(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        logits, values = net(inputs)
        return logits.logsumexp(-1).mean() + values.pow(2).mean()

    return step


def time_fwd_bwd(
    net: nn.Module, step: Callable, inputs: dict, *, iters: int, warmup: int, device: str
) -> float:
    """Seconds per forward+backward pass (median-free mean over `iters` after warm-up)."""
    for i in range(warmup + iters):
        if i == warmup:
            if device == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
        net.zero_grad(set_to_none=True)
        step(inputs).backward()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters


def run(args: argparse.Namespace) -> list[tuple[str, str, float]]:
    base, _ = TransformerLSTMModelSpec.from_model_config({})
    inputs = make_inputs(args.batch, args.seq, base.history, args.device)
    if args.padded:  # left padding as at episode starts: 0..H-1 missing frames per window
        missing = torch.randint(
            0, base.history, inputs["history_mask"].shape[:2], device=args.device
        )
        slots = torch.arange(base.history, device=args.device)
        inputs["history_mask"] = (slots >= missing[..., None]).float()
    torch.manual_seed(0)
    reference = ReferenceNet(base).to(args.device)
    rows = [
        ("reference (nn.Transformer*)", "fp32", _timed(reference, reference_step, inputs, args))
    ]
    precisions = ["fp32", "bf16"] if args.device == "cuda" else ["fp32"]
    params = {"reference": count_parameters(reference)}
    for precision, encoder in ((p, e) for p in precisions for e in ("window", "streaming")):
        config = base.model_copy(update={"precision": precision, "encoder": encoder})
        net = build_net(config, args.device)
        params[encoder] = count_parameters(net)
        # The window rows take the reference's inputs (padded with --padded); streaming reads
        # one new frame per step after a full key/value cache, as the learner does mid-episode.
        chunks = inputs if encoder == "window" else None
        rows.append(
            (f"transformer_lstm {encoder}", precision, learner_seconds(net, config, args, chunks))
        )
    print("params: " + ", ".join(f"{name} {count:,}" for name, count in params.items()))
    return rows


def _timed(net: nn.Module, make_step: Callable, inputs: dict, args: argparse.Namespace) -> float:
    return time_fwd_bwd(
        net, make_step(net), inputs, iters=args.iters, warmup=args.warmup, device=args.device
    )


def build_net(config: TransformerLSTMModelSpec, device: str) -> TransformerLSTMBase:
    torch.manual_seed(0)
    return transformer_lstm_net_for(
        obs_dim=OBS_DIM, frame_dim=FRAME_DIM, action_space=gym.spaces.Discrete(ACTIONS),
        config=config,
    ).to(device)  # fmt: skip


def learner_seconds(
    net: TransformerLSTMBase,
    config: TransformerLSTMModelSpec,
    args: argparse.Namespace,
    chunks: dict | None = None,
) -> float:
    """Seconds per forward+backward of `--batch` chunks x `--seq` steps from the steady state
    (zero LSTM state; streaming: a full key/value cache); random full windows by default."""
    if chunks is None:
        chunks = make_inputs(args.batch, args.seq, config.input_frames, args.device)
    step = chunk_step(net, steady_state(net, args.batch, args.device))
    return time_fwd_bwd(net, step, chunks, iters=args.iters, warmup=args.warmup, device=args.device)


def print_table(rows: list[tuple[str, str, float]], args: argparse.Namespace) -> None:
    samples = args.batch * args.seq
    ref_seconds = rows[0][2]
    print(
        f"device={args.device} batch={args.batch} seq={args.seq} iters={args.iters} "
        f"padded={args.padded} torch_threads={torch.get_num_threads()}"
    )
    print(f"{'implementation':<30} {'prec':<5} {'ms/iter':>10} {'samples/s':>12} {'vs ref':>7}")
    for name, precision, seconds in rows:
        print(
            f"{name:<30} {precision:<5} {seconds * 1e3:>10.1f} {samples / seconds:>12.0f} "
            f"{ref_seconds / seconds:>6.2f}x"
        )


def steady_state(net: TransformerLSTMBase, rows: int, device: str) -> dict[str, torch.Tensor]:
    """Zero LSTM state; for streaming a full cache of random keys/values (mid-episode)."""
    state = {k: v.expand(rows, *v.shape).clone().to(device) for k, v in net.initial_state().items()}
    for key, value in state.items():
        if key == KV_VALID_KEY:
            value.fill_(1.0)
        elif key.startswith("kv_"):
            value.normal_()
    return state


def time_rollout(
    net: TransformerLSTMBase, inputs: dict, state: dict, *, iters: int, warmup: int, device: str
) -> float:
    """Seconds per acting step of all rows (T = 1, no_grad, state carried like a runner)."""
    with torch.no_grad():
        for i in range(warmup + iters):
            if i == warmup:
                if device == "cuda":
                    torch.cuda.synchronize()
                start = time.perf_counter()
            embeddings, state = net.encode(inputs, state)
            net.policy(embeddings, None)
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters


def chunk_step(net: TransformerLSTMBase, state: dict) -> Callable[[dict], torch.Tensor]:
    def step(inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        emb, _ = net.encode(inputs, state)
        return net.policy(emb, None).logsumexp(-1).mean() + net.value(emb).pow(2).mean()

    return step


def run_encoders(args: argparse.Namespace) -> list[tuple[str, str, int, float, float]]:
    """(encoder, precision, parameters, s per agent step, s per chunk fwd+bwd) rows."""
    base, _ = TransformerLSTMModelSpec.from_model_config({})
    precisions = ["fp32", "bf16"] if args.device == "cuda" else ["fp32"]
    rows = []
    for precision, encoder in ((p, e) for p in precisions for e in ("window", "streaming")):
        config = base.model_copy(update={"precision": precision, "encoder": encoder})
        net = build_net(config, args.device)
        timing = {"iters": args.iters, "warmup": args.warmup, "device": args.device}
        acting = make_inputs(args.seats, 1, config.input_frames, args.device)
        rollout = time_rollout(net, acting, steady_state(net, args.seats, args.device), **timing)
        learner = learner_seconds(net, config, args)
        rows.append((encoder, precision, count_parameters(net), rollout / args.seats,
                     learner / args.batch))  # fmt: skip
    return rows


def print_encoders(
    rows: list[tuple[str, str, int, float, float]], args: argparse.Namespace
) -> None:
    print(
        f"\nwindow vs streaming encoder: rollout {args.seats} seats x 1 step, learner "
        f"{args.batch} chunks x {args.seq} steps, iters={args.iters}"
    )
    header = ("encoder", "prec", "params", "rollout us/step", "learner ms/chunk")
    print("{:<10} {:<5} {:>10} {:>16} {:>17}".format(*header))
    for encoder, precision, params, rollout, learner in rows:
        print(
            f"{encoder:<10} {precision:<5} {params:>10,} {rollout * 1e6:>16.1f} "
            f"{learner * 1e3:>17.2f}"
        )
    for window, streaming in zip(rows[::2], rows[1::2], strict=True):
        print(
            f"streaming vs window ({window[1]}): rollout {window[3] / streaming[3]:.1f}x faster, "
            f"learner fwd+bwd {window[4] / streaming[4]:.1f}x faster, "
            f"parameters {streaming[2] / window[2]:.3f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--batch", type=int, default=None, help="default: 8 on cpu, 128 on cuda")
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--seats", type=int, default=64, help="rows per rollout step")
    parser.add_argument("--iters", type=int, default=None, help="default: 3 on cpu, 20 on cuda")
    parser.add_argument("--warmup", type=int, default=None, help="default: 1 on cpu, 5 on cuda")
    parser.add_argument("--padded", action="store_true", help="left-padded windows (masked SDPA)")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads")
    parser.add_argument("--only", choices=["all", "reference", "encoders"], default="all")
    parser.add_argument(
        "--quick", action="store_true", help="sanity run: batch 2, 1 warm-up + 1 pass"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    on_cpu = args.device == "cpu"
    if args.quick:
        args.batch, args.iters, args.warmup = 2, 1, 1
    args.batch = args.batch or (8 if on_cpu else 128)
    args.iters = args.iters or (3 if on_cpu else 20)
    args.warmup = args.warmup if args.warmup is not None else (1 if on_cpu else 5)
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda but CUDA is not available")
    if args.only in ("all", "reference"):
        print_table(run(args), args)
    if args.only in ("all", "encoders"):
        print_encoders(run_encoders(args), args)


if __name__ == "__main__":
    main()
