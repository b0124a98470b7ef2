"""Plain-torch building blocks shared by our RLModules: MLP, LSTM core, heads, action masking.

No Ray import: everything here is testable with torch alone. Shapes use B = batch, T = time.

Action-head outputs follow RLlib's `ACTION_DIST_INPUTS` conventions so that RLlib's own
distributions consume them unchanged:
- Discrete(n): n logits (`TorchCategorical`).
- MultiDiscrete(nvec): sum(nvec) logits, concatenated per sub-space (`TorchMultiCategorical`).
- Box(d): [mean (d), log_std (d)] concatenated (`TorchDiagGaussian`). log_std is a learned
  state-independent parameter, not a network output: it is the usual PPO choice (Schulman et
  al. 2017; Andrychowicz et al. 2021, "What matters in on-policy RL", §3) and keeps early
  exploration from collapsing when the trunk saturates.
"""

import math
from collections.abc import Sequence

import gymnasium as gym
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

_ACTIVATIONS: dict[str, type[nn.Module]] = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "silu": nn.SiLU,
    "gelu": nn.GELU,
    "elu": nn.ELU,
}

# Std of the orthogonal init of the last policy layer. A near-uniform initial policy is one of
# the implementation details that matter for PPO (Andrychowicz et al. 2021, §3.2: 0.01).
POLICY_OUT_GAIN = 0.01


def activation_layer(name: str) -> nn.Module:
    try:
        return _ACTIVATIONS[name]()
    except KeyError:
        raise ValueError(
            f"unknown activation {name!r}; use one of {sorted(_ACTIVATIONS)}"
        ) from None


class MLP(nn.Module):
    """Linear + activation stack; `out_dim` is the last hidden size (or `in_dim` if none)."""

    def __init__(self, in_dim: int, hidden: Sequence[int], *, activation: str = "relu") -> None:
        super().__init__()
        layers: list[nn.Module] = []
        for size in hidden:
            layers += [nn.Linear(in_dim, size), activation_layer(activation)]
            in_dim = size
        self.layers = nn.Sequential(*layers)
        self.out_dim = in_dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def is_capturing(tensor: torch.Tensor) -> bool:
    """Whether `tensor`'s CUDA stream is being captured into a CUDA graph (never on CPU):
    code that asks the device a question (a host sync) must not, then."""
    return tensor.is_cuda and torch.cuda.is_current_stream_capturing()


class LSTMCore(nn.Module):
    """Single-layer batch-first LSTM taking and returning the (h, c) state as [B, C] tensors.

    With `seq_lens`, the zero-padded tail of each row is skipped via packing, so the returned
    state is the one after the last *valid* step (padding never leaks into the state) and
    outputs at padded steps are zeros. With `skip`, the output is concat[LSTM output, input]
    (`out_dim` wide): a residual path around the memory, so what the current step shows
    reaches the heads without passing the LSTM's gates.
    """

    def __init__(self, in_dim: int, cell_size: int, *, skip: bool = False) -> None:
        super().__init__()
        self.cell_size = cell_size
        self.lstm = nn.LSTM(in_dim, cell_size, batch_first=True)
        self.skip = skip
        self.out_dim = cell_size + in_dim if skip else cell_size

    def initial_state(self, batch_size: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
        device = self.lstm.weight_hh_l0.device
        zeros = torch.zeros(batch_size, self.cell_size, device=device)
        return zeros, zeros.clone()

    def forward(
        self,
        x: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor],
        seq_lens: torch.Tensor | None = None,
        resets: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """`resets` [B, T] bool: the state restarts from zeros before each marked step (a new
        episode inside the sequence: the array learner's rows); it replaces `seq_lens`."""
        if resets is None:
            out, state = self._run(x, state, seq_lens)
        else:
            out, state = self._scan(x, state, resets)
        return (torch.cat([out, x], dim=-1) if self.skip else out), state

    def _scan(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor], resets: torch.Tensor
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """The LSTM written out over T steps with masks instead of host lengths: the input
        projection for all steps at once, then one gate update per step (no packing, no
        cuDNN: fixed shapes and no host read, what a captured update step needs)."""
        lstm = self.lstm
        projected = F.linear(x, lstm.weight_ih_l0, lstm.bias_ih_l0)
        keep = (~resets).to(x.dtype)[..., None]
        h, c = (s.to(x.dtype) for s in state)
        outputs = []
        for t in range(x.shape[1]):
            h, c = h * keep[:, t], c * keep[:, t]
            gates = projected[:, t] + F.linear(h, lstm.weight_hh_l0, lstm.bias_hh_l0)
            i, f, g, o = gates.chunk(4, dim=-1)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            outputs.append(h)
        return torch.stack(outputs, dim=1), (h, c)

    def _cell_step(
        self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        """x [B, 1, in] one step from state ([B, C], [B, C]), without the cuDNN kernel."""
        h, c = _lstm_gates_step(self.lstm, x[:, 0], *(s.to(x.dtype) for s in state))
        return h[:, None], (h, c)

    def _run(
        self,
        x: torch.Tensor,
        state: tuple[torch.Tensor, torch.Tensor],
        seq_lens: torch.Tensor | None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        # cuDNN refuses a non-contiguous hx (e.g. an expanded initial state); CPU accepts it.
        steps = x.shape[1]
        if steps == 1 and is_capturing(x):
            return self._cell_step(x, state)
        h, c = (s.unsqueeze(0).to(x.dtype).contiguous() for s in state)
        if seq_lens is None or steps == 1:
            out, (h, c) = self.lstm(x, (h, c))
            return out, (h.squeeze(0), c.squeeze(0))
        # pack_padded_sequence wants lengths on the CPU and >= 1 (RLlib never sends 0-length
        # rows, the clamp only guards hand-built batches).
        lengths = seq_lens.detach().to("cpu", torch.int64).clamp(1, steps)
        if bool((lengths == steps).all()):  # no padding: skip the pack/unpack copies
            out, (h, c) = self.lstm(x, (h, c))
            return out, (h.squeeze(0), c.squeeze(0))
        packed = nn.utils.rnn.pack_padded_sequence(
            x, lengths, batch_first=True, enforce_sorted=False
        )
        out, (h, c) = self.lstm(packed, (h, c))
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=steps)
        return out, (h.squeeze(0), c.squeeze(0))


def _lstm_gates_step(
    lstm: nn.LSTM, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """One step of a single-layer `nn.LSTM` written out (its documented equations, gates in
    the order i, f, g, o): what a captured CUDA graph runs instead of the cuDNN kernel."""
    gates = F.linear(x, lstm.weight_ih_l0, lstm.bias_ih_l0) + F.linear(
        h, lstm.weight_hh_l0, lstm.bias_hh_l0
    )
    i, f, g, o = gates.chunk(4, dim=-1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


def action_dist_input_dim(action_space: gym.Space) -> int:
    """Width of ACTION_DIST_INPUTS for `action_space` (see module docstring)."""
    if isinstance(action_space, gym.spaces.Discrete):
        return int(action_space.n)
    if isinstance(action_space, gym.spaces.MultiDiscrete):
        return int(np.sum(action_space.nvec))
    if isinstance(action_space, gym.spaces.Box):
        return 2 * int(np.prod(action_space.shape))
    raise ValueError(f"unsupported action space {action_space}; use Discrete, MultiDiscrete or Box")


def _orthogonal_(layer: nn.Linear, gain: float) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain=gain)
    nn.init.zeros_(layer.bias)
    return layer


class ActionHead(nn.Module):
    """MLP + output layer producing RLlib ACTION_DIST_INPUTS for `action_space`."""

    def __init__(
        self,
        in_dim: int,
        action_space: gym.Space,
        *,
        hidden: Sequence[int] = (),
        activation: str = "relu",
        initial_log_std: float = 0.0,
    ) -> None:
        super().__init__()
        self.mlp = MLP(in_dim, hidden, activation=activation)
        self.is_gaussian = isinstance(action_space, gym.spaces.Box)
        out_dim = action_dist_input_dim(action_space)
        out_dim = out_dim // 2 if self.is_gaussian else out_dim
        self.out = _orthogonal_(nn.Linear(self.mlp.out_dim, out_dim), POLICY_OUT_GAIN)
        # Only Box heads own a log_std; registering None keeps state dicts minimal otherwise.
        self.log_std = (
            nn.Parameter(torch.full((out_dim,), float(initial_log_std)))
            if self.is_gaussian
            else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.out(self.mlp(x))
        if self.log_std is None:
            return out
        return torch.cat([out, self.log_std.to(out.dtype).expand_as(out)], dim=-1)


class ValueHead(nn.Module):
    """MLP + scalar output; returns values with the trailing 1 squeezed ([B] or [B, T])."""

    def __init__(self, in_dim: int, *, hidden: Sequence[int] = (), activation: str = "relu"):
        super().__init__()
        self.mlp = MLP(in_dim, hidden, activation=activation)
        self.out = _orthogonal_(nn.Linear(self.mlp.out_dim, 1), 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.mlp(x)).squeeze(-1)


def apply_action_mask(logits: torch.Tensor, action_mask: torch.Tensor | None) -> torch.Tensor:
    """Replace logits of masked actions (mask <= 0.5) with the dtype's most negative value.

    Replacing (torch.where) instead of adding log(mask) never overflows to -inf, so softmax,
    log-probs, entropy and KL stay finite (0 * finite = 0) and masked entries get no gradient.
    RLlib's action-masking example adds `clamp(log(mask), FLOAT_MIN)` instead
    (ray/rllib/examples/rl_modules/classes/action_masking_rlm.py), which can reach -inf for
    large negative logits. A row with every action masked (e.g. zero-padded time steps in a
    training batch) becomes uniform, never NaN. For MultiDiscrete the mask covers the
    concatenated sub-space logits.
    """
    if action_mask is None:
        return logits
    if action_mask.shape[-1] != logits.shape[-1]:
        raise ValueError(
            f"action_mask has {action_mask.shape[-1]} entries but the policy outputs "
            f"{logits.shape[-1]} logits"
        )
    very_negative = torch.tensor(torch.finfo(logits.dtype).min, dtype=logits.dtype)
    return torch.where(action_mask.to(logits.device) > 0.5, logits, very_negative.to(logits.device))


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def flat_dim(space: gym.Space) -> int:
    """Number of features of a Box observation once its trailing dims are flattened."""
    if not isinstance(space, gym.spaces.Box):
        raise ValueError(f"expected a Box observation space, got {space}")
    return int(math.prod(space.shape)) if space.shape else 1
