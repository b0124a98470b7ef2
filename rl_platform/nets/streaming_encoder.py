"""Streaming opponent-history encoder in plain torch: every frame is encoded once.

The window encoder (transformer.py) re-encodes the last H frames through every layer at
every step. Here each step adds one token: causal sliding-window self-attention of width H
(a token attends to itself and the H - 1 tokens before it, the frames the window encoder
sees), as in Longformer's local attention and Mistral 7B (Beltagy et al. 2020; Jiang et al.
2023). Positions are relative: rotary embeddings (Su et al. 2021, "RoFormer") make every
attention score depend on the distance between query and key only, never on where the
episode started; there is no absolute positional embedding.

Key/value cache. Each attention ("slot": the transformer layers, then the attention pooling,
then the extractor's cross-attention; the last two attend over the last H output tokens)
caches the keys and values of the last H - 1 tokens, `[B, 2, kv_heads, H - 1, head_dim]`;
one validity mask `[B, H - 1]` and the episode position of the next token `[B]` serve all
slots. Keys are cached already rotated at their episode position, as Llama's cache does,
so a step rotates only its new token (angles in float64, see `rotary_tables`; positions are
exact in the fp32 state up to 2**24 steps per episode).

A forward pass over T new tokens attends over `cat(cache, new)` with a banded causal mask and
keeps the H - 1 newest keys/values as the next cache. The same code serves T = 1 (acting: one
token through the layers per step) and T = max_seq_len (learning: one causal pass per
sequence chunk whose lookback is the cache the chunk started from), so the two agree up to
floating-point rounding by construction. Each slot's cache holds what that attention
computed when the tokens were new: the chunk pass reuses it instead of recomputing the
L * (H - 1) frames of lookback that L layers of width-H attention reach (Transformer-XL's
memory, Dai et al. 2019: no gradient flows into it).

Grouped-query attention runs as plain SDPA per key/value head: the g = heads / kv_heads
query heads that share a key/value head become g * T queries of that head ("GQA packing"),
the same result as SDPA's `enable_gqa`, and 2-3x faster on CPU for one new token.

Shapes: B = rows, T = new tokens per row, n = H - 1 + T keys, d = d_model, g as above.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from rl_platform.nets.blocks import is_capturing
from rl_platform.nets.transformer import AttentionPooling, MultiHeadAttention, TransformerBlock

ROPE_BASE = 10_000.0  # RoFormer's theta base (Su et al. 2021, section 3.4.2)


def rotary_tables(positions: torch.Tensor, head_dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """cos, sin `[*positions.shape, 1, head_dim / 2]` (fp32) of the RoPE angles at integer
    `positions`.

    Computed in float64 and rounded once: fp32 angles of late positions (1e4 rad and more)
    would carry errors of 1e-3 rad, in float64 they stay far below fp32 rounding.
    """
    half = head_dim // 2
    exponent = torch.arange(half, dtype=torch.float64, device=positions.device) / half
    angles = positions.to(torch.float64)[..., None, None] * ROPE_BASE**-exponent
    return angles.cos().float(), angles.sin().float()


def rotate(x: torch.Tensor, tables: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """Rotate feature pairs (i, i + hd/2) of x `[B, T, heads, hd]` (GPT-NeoX pairing)."""
    cos, sin = (t.to(x.dtype) for t in tables)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


@dataclass(frozen=True)
class SlidingWindow:
    """Which keys each new token attends to, their rotary tables, and what the cache keeps.

    Keys are the H - 1 cached tokens followed by the T new ones; new token i is key
    H - 1 + i and attends to keys i .. H - 1 + i that are valid, and always to itself (a
    fully masked row makes SDPA return NaN).
    """

    cache_len: int
    mask: torch.Tensor | None
    """bool `[B, 1, g * T, n]` (True = attend; packed query heads, see the module docstring),
    None when every key is allowed (lets SDPA use FlashAttention when acting)."""
    key_valid: torch.Tensor
    """bool `[B, n]`: cached slots that hold a token, and new tokens whose frame is real."""
    rope: tuple[torch.Tensor, torch.Tensor]
    """Rotary tables `[B, T, 1, hd / 2]` of the new tokens' episode positions."""
    next_position: torch.Tensor
    """`[B]` episode position after the chunk (after each row's last valid token)."""
    keep: torch.Tensor | None
    """`[B, H - 1]` key indices of the next cache (the H - 1 keys up to each row's last valid
    token); None: the last H - 1 keys of every row."""

    @classmethod
    def build(
        cls,
        *,
        cache_valid: torch.Tensor,
        token_valid: torch.Tensor,
        position: torch.Tensor,
        head_dim: int,
        groups: int,
        seq_lens: torch.Tensor | None = None,
        resets: torch.Tensor | None = None,
    ) -> "SlidingWindow":
        """`cache_valid` bool [B, H - 1], `token_valid` bool [B, T], `position` [B] episode
        position of the first new token, `groups` query heads per key/value head,
        `seq_lens` [B] or None (all T steps valid), `resets` bool [B, T] or None: a new
        episode starts at each marked token (the array learner's rows), which attends to
        nothing before it and counts positions from 0; it replaces `seq_lens`."""
        if resets is not None:
            return cls._with_resets(cache_valid, token_valid, position, head_dim, groups, resets)
        cache_len, steps = cache_valid.shape[1], token_valid.shape[1]
        device = token_valid.device
        query = torch.arange(steps, device=device)[:, None]
        key = torch.arange(cache_len + steps, device=device)[None, :]
        band = (key >= query) & (key <= query + cache_len)
        key_valid = torch.cat([cache_valid, token_valid], dim=1)
        mask = band & (key_valid[:, None, :] | (key == query + cache_len))
        position = position.to(device).round().to(torch.int64)
        lengths, keep = torch.full_like(position, steps), None
        if seq_lens is not None and steps > 1:
            lengths = seq_lens.to(device, torch.int64).clamp(0, steps)
            if not bool((lengths == steps).all()):
                keep = lengths[:, None] + torch.arange(cache_len, device=device)
        packed = mask[:, None, None].expand(-1, -1, groups, -1, -1).flatten(2, 3)
        # Dropping an all-true mask lets SDPA use FlashAttention, but asking costs a host
        # sync, which a CUDA graph being captured cannot have: it keeps the mask.
        all_allowed = not is_capturing(mask) and bool(mask.all())
        return cls(
            cache_len=cache_len,
            mask=None if all_allowed else packed,
            key_valid=key_valid,
            rope=rotary_tables(position[:, None] + query[:, 0], head_dim),
            next_position=position + lengths,
            keep=keep,
        )

    @classmethod
    def _with_resets(
        cls,
        cache_valid: torch.Tensor,
        token_valid: torch.Tensor,
        position: torch.Tensor,
        head_dim: int,
        groups: int,
        resets: torch.Tensor,
    ) -> "SlidingWindow":
        """The window of a sequence with episode starts inside it: a token attends only to
        keys of its own episode (the cache belongs to the episode the sequence started in);
        the next cache keeps the last episode's keys only. No host read (a training step)."""
        cache_len, steps = cache_valid.shape[1], token_valid.shape[1]
        device = token_valid.device
        query = torch.arange(steps, device=device)
        key = torch.arange(cache_len + steps, device=device)[None, :]
        band = (key >= query[:, None]) & (key <= query[:, None] + cache_len)
        episode = torch.cumsum(resets.to(torch.int64), dim=1)  # [B, T]
        key_episode = torch.cat([torch.zeros_like(cache_valid, dtype=torch.int64), episode], 1)
        key_valid = torch.cat([cache_valid, token_valid], dim=1)
        same = key_episode[:, None, :] == episode[:, :, None]
        itself = key == query[:, None] + cache_len
        mask = band & same & (key_valid[:, None, :] | itself)
        last_reset = torch.cummax(torch.where(resets, query, -1), dim=1).values
        start = position.to(device).round().to(torch.int64)[:, None]
        positions = torch.where(last_reset >= 0, query - last_reset, start + query)
        return cls(
            cache_len=cache_len,
            mask=mask[:, None, None].expand(-1, -1, groups, -1, -1).flatten(2, 3),
            key_valid=key_valid & (key_episode == episode[:, -1:]),
            rope=rotary_tables(positions, head_dim),
            next_position=positions[:, -1] + 1,
            keep=None,
        )

    def keep_last(self, values: torch.Tensor, dim: int) -> torch.Tensor:
        """The next cache's entries of `values` (batch first, keys along `dim`)."""
        if self.keep is None:
            return values.narrow(dim, values.shape[dim] - self.cache_len, self.cache_len)
        shape = [1] * values.dim()
        shape[0], shape[dim] = self.keep.shape
        return torch.take_along_dim(values, self.keep.view(shape), dim=dim)


def cached_attention(
    attn: MultiHeadAttention,
    queries: torch.Tensor,
    context: torch.Tensor,
    cache: torch.Tensor,
    window: SlidingWindow,
) -> tuple[torch.Tensor, torch.Tensor]:
    """`attn` over the window: queries [B, T, d] attend to cached + new keys/values.

    `context` [B, T, d] are the new tokens, `cache` [B, 2, kv_heads, H - 1, hd] the cached
    keys (rotated) and values. Returns (output [B, T, d], keys/values [B, 2, kv_heads, n, hd]).
    """
    b, steps, _ = queries.shape
    kv_heads, head_dim = attn.kv_heads, attn.head_dim
    groups = attn.heads // kv_heads
    q = rotate(attn.q(queries).view(b, steps, attn.heads, head_dim), window.rope)
    q = q.view(b, steps, kv_heads, groups, head_dim).permute(0, 2, 3, 1, 4).flatten(2, 3)
    k, v = attn.kv(context).view(b, steps, 2, kv_heads, head_dim).unbind(2)
    new = torch.stack([rotate(k, window.rope), v], dim=1).transpose(2, 3)
    kv = torch.cat([cache.to(new.dtype), new], dim=3)
    out = F.scaled_dot_product_attention(q, kv[:, 0], kv[:, 1], attn_mask=window.mask)
    out = out.view(b, kv_heads, groups, steps, head_dim).permute(0, 3, 1, 2, 4)
    return attn.out(out.reshape(b, steps, -1)), kv


class StreamingEncoder(nn.Module):
    """New frames [B, T, D] + caches -> (latent [B, T, d], tokens [B, T, d], keys/values).

    The window encoder's layers (pre-norm blocks, final LayerNorm, attention pooling with a
    learned query) without its absolute positional embedding. It owns `layers + 1` cache
    slots (each block, then the pooling); keys/values come back per slot, all n keys.
    """

    def __init__(
        self,
        *,
        frame_dim: int,
        d_model: int,
        layers: int,
        heads: int,
        ffn_mult: int = 1,
        kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        self.embed = nn.Linear(frame_dim, d_model)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, heads, ffn_mult=ffn_mult, kv_heads=kv_heads)
            for _ in range(layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.pool = AttentionPooling(d_model, heads, kv_heads=kv_heads)
        self.slots = layers + 1

    def forward(
        self, frames: torch.Tensor, caches: list[torch.Tensor], window: SlidingWindow
    ) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
        """`caches`: one [B, 2, kv_heads, H - 1, hd] per slot."""
        x = self.embed(frames)
        keys_values = []
        for block, cache in zip(self.blocks, caches[:-1], strict=True):
            h = block.norm1(x)
            attended, kv = cached_attention(block.attn, h, h, cache, window)
            keys_values.append(kv)
            x = x + attended
            x = x + block.ffn(block.norm2(x))
        tokens = self.norm(x)
        query = self.pool.query.expand(*tokens.shape[:2], -1).to(tokens.dtype)
        latent, kv = cached_attention(self.pool.attn, query, tokens, caches[-1], window)
        return latent, tokens, [*keys_values, kv]
