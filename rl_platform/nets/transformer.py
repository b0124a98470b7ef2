"""Opponent strategy encoder in plain torch: a small pre-norm transformer over history frames.

Shapes: N = number of windows (B * T when called from the module), H = history length,
D = opponent feature width, d = d_model. `valid` is a bool [N, H] key-padding mask (True =
a real frame); frames are ordered oldest -> newest and left-padded (see
rl_platform/nets/history_window.py).

Attention goes through `torch.nn.functional.scaled_dot_product_attention` (SDPA) so PyTorch
picks the fused kernel: FlashAttention when no mask is needed (we drop the mask when every
window is full), the memory-efficient kernel with a mask, the math kernel on CPU
(https://pytorch.org/docs/stable/generated/torch.nn.functional.scaled_dot_product_attention.html).
Layers are pre-norm (Xiong et al. 2020, "On layer normalization in the transformer
architecture"), which trains stably without warm-up.
"""

import torch
import torch.nn.functional as F
from torch import nn

from rl_platform.nets.blocks import MLP, is_capturing


def ensure_one_valid(valid: torch.Tensor) -> torch.Tensor:
    """Mark the newest frame valid in rows with no valid frame at all.

    Fully masked rows make SDPA return NaN, and NaN poisons gradients even when the loss
    masks those rows out. Such rows only occur at zero-padded time steps of a training batch
    (the connector always writes the current frame), so what they attend to does not matter.
    """
    empty = ~valid.any(dim=-1, keepdim=True)
    newest = torch.zeros_like(valid)
    newest[..., -1] = True
    return valid | (empty & newest)


def key_padding(valid: torch.Tensor) -> torch.Tensor | None:
    """`valid` with empty rows fixed, or None when every frame is valid.

    None lets SDPA use FlashAttention, which takes no mask. `valid.all()` costs one device
    sync per forward (done once, not per layer), cheap next to the attention it may speed up;
    while a CUDA graph is captured, the mask stays.
    """
    valid = ensure_one_valid(valid.bool())
    return None if not is_capturing(valid) and bool(valid.all()) else valid


def _attention_mask(valid: torch.Tensor | None) -> torch.Tensor | None:
    # [N, Lk] -> [N, 1, 1, Lk], broadcast over heads and queries (True = attend).
    return None if valid is None else valid[:, None, None, :]


class MultiHeadAttention(nn.Module):
    """Grouped-query attention via SDPA; self-attention when `context` is None.

    `heads` query heads share `kv_heads` key/value heads (Ainslie et al. 2023, "GQA"), which
    cuts the K/V projection to `2 * kv_heads / heads` of its multi-head size; `kv_heads ==
    heads` is plain multi-head attention. SDPA broadcasts the groups (`enable_gqa`), so the
    fused kernels still apply.
    """

    def __init__(self, d_model: int, heads: int, *, kv_heads: int | None = None) -> None:
        super().__init__()
        kv_heads = heads if kv_heads is None else kv_heads
        if d_model % heads:
            raise ValueError(f"d_model {d_model} not divisible by heads {heads}")
        if heads % kv_heads:
            raise ValueError(f"heads {heads} not divisible by kv_heads {kv_heads}")
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = d_model // heads
        self.q = nn.Linear(d_model, d_model)
        self.kv = nn.Linear(d_model, 2 * kv_heads * self.head_dim)
        self.out = nn.Linear(d_model, d_model)

    def _split(self, x: torch.Tensor, heads: int) -> torch.Tensor:
        n, length, _ = x.shape
        return x.view(n, length, heads, self.head_dim).transpose(1, 2)

    def forward(
        self,
        x: torch.Tensor,
        context: torch.Tensor | None = None,
        valid: torch.Tensor | None = None,
    ) -> torch.Tensor:
        context = x if context is None else context
        k, v = self.kv(context).chunk(2, dim=-1)
        q = self._split(self.q(x), self.heads)
        k, v = self._split(k, self.kv_heads), self._split(v, self.kv_heads)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=_attention_mask(valid), enable_gqa=self.kv_heads != self.heads
        )
        n, _, length, _ = out.shape
        return self.out(out.transpose(1, 2).reshape(n, length, -1))


class TransformerBlock(nn.Module):
    """Pre-norm block: x + MHA(LN(x)); x + FFN(LN(x))."""

    def __init__(
        self, d_model: int, heads: int, *, ffn_mult: int = 1, kv_heads: int | None = None
    ) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, heads, kv_heads=kv_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = nn.Sequential(
            nn.Linear(d_model, ffn_mult * d_model),
            nn.GELU(),
            nn.Linear(ffn_mult * d_model, d_model),
        )

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), valid=valid)
        return x + self.ffn(self.norm2(x))


class AttentionPooling(nn.Module):
    """A learned query attends over the tokens: [N, L, d] -> [N, d] (Lee et al. 2019, PMA)."""

    def __init__(self, d_model: int, heads: int, *, kv_heads: int | None = None) -> None:
        super().__init__()
        self.query = nn.Parameter(torch.randn(1, 1, d_model) * d_model**-0.5)
        self.attn = MultiHeadAttention(d_model, heads, kv_heads=kv_heads)

    def forward(self, tokens: torch.Tensor, valid: torch.Tensor | None) -> torch.Tensor:
        query = self.query.expand(tokens.shape[0], -1, -1).to(tokens.dtype)
        return self.attn(query, context=tokens, valid=valid).squeeze(1)


class StrategyEncoder(nn.Module):
    """Opponent history [N, H, D] + mask -> (latent [N, d], tokens [N, H, d]).

    `valid` is the output of `key_padding` (bool [N, H] or None = all valid).
    """

    def __init__(
        self,
        *,
        frame_dim: int,
        history: int,
        d_model: int,
        layers: int,
        heads: int,
        ffn_mult: int = 1,
        kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        self.embed = nn.Linear(frame_dim, d_model)
        self.position = nn.Parameter(torch.randn(1, history, d_model) * 0.02)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, heads, ffn_mult=ffn_mult, kv_heads=kv_heads)
            for _ in range(layers)
        )
        self.norm = nn.LayerNorm(d_model)
        self.pool = AttentionPooling(d_model, heads, kv_heads=kv_heads)

    def forward(
        self, frames: torch.Tensor, valid: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embed(frames) + self.position[:, : frames.shape[1]].to(frames.dtype)
        for block in self.blocks:
            x = block(x, valid)
        tokens = self.norm(x)
        return self.pool(tokens, valid), tokens


class ConditionedExtractor(nn.Module):
    """Own-observation features cross-attend to the strategy tokens.

    obs [N, obs_dim] -> MLP -> f [N, d]; f' = f + CrossAttn(LN(f), tokens);
    output = Linear(concat[f', strategy latent]) with width d. The projection is a low-rank
    factor of the LSTM's input weights: a 2d-wide LSTM input costs 4 * cell * 2d weights
    (1.05M at d 256, cell 512), the d-wide one half of that plus 2d * d for the projection.
    """

    def __init__(
        self,
        *,
        obs_dim: int,
        d_model: int,
        heads: int,
        hidden: tuple[int, ...] = (256,),
        activation: str = "relu",
        kv_heads: int | None = None,
    ) -> None:
        super().__init__()
        self.mlp = MLP(obs_dim, hidden, activation=activation)
        self.proj = nn.Linear(self.mlp.out_dim, d_model)
        self.norm = nn.LayerNorm(d_model)
        self.cross = MultiHeadAttention(d_model, heads, kv_heads=kv_heads)
        self.merge = nn.Linear(2 * d_model, d_model)
        self.out_dim = d_model

    def own_features(self, obs: torch.Tensor) -> torch.Tensor:
        """f = proj(MLP(obs)); the cross-attention's query is LN(f)."""
        return self.proj(self.mlp(obs))

    def combine(
        self, features: torch.Tensor, attended: torch.Tensor, latent: torch.Tensor
    ) -> torch.Tensor:
        """Linear(concat[f + attended, latent]); `attended` = CrossAttn(LN(f), tokens)."""
        return self.merge(torch.cat([features + attended, latent], dim=-1))

    def forward(
        self,
        obs: torch.Tensor,
        latent: torch.Tensor,
        tokens: torch.Tensor,
        valid: torch.Tensor | None,
    ) -> torch.Tensor:
        f = self.own_features(obs).unsqueeze(1)
        attended = self.cross(self.norm(f), context=tokens, valid=valid)
        return self.combine(f.squeeze(1), attended.squeeze(1), latent)
