"""League members as plain torch policies on CPU (no Ray): `act(obs[B, D], rng) -> actions[B]`.

Used by tournaments to play stored weights without building an RLlib algorithm. Weights are
a module's state dict as stored in the league (`League.load_weights`) or in a checkpoint
(`module_weights`). Supported model types (the spec's `model.type`):

* `default` / `mlp`: RLlib's default PPO MLP. The policy path is
  `encoder.actor_encoder.net.mlp.<i>` (or `encoder.encoder...` with `vf_share_layers`), every
  layer followed by the spec's activation, then the `pi.net.mlp.<i>` head (ReLU between head
  layers, RLlib's `head_fcnet_activation` default).
* `lstm` / `transformer_lstm`: rl_platform's recurrent nets (`net.*` plus the top-level
  `critic.*`), built from the spec's settings; the policy keeps one LSTM state (and, for
  transformer_lstm, one opponent-history window) per game row, so an instance plays one batch
  of games in lockstep from their first frame (as `arena.run_matches` does). Make a new
  instance per batch of games.

Actions are sampled from the policy's distribution with the caller's RNG.
"""

import re
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from torch import nn

from rl_platform.errors import UserError

ActFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]
PolicyFactory = Callable[[], ActFn]
_ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "silu": nn.SiLU}
_ENCODER_PREFIXES = ("encoder.actor_encoder.net.mlp.", "encoder.encoder.net.mlp.")
_HEAD_PREFIX = "pi.net.mlp."


def sample_actions(logits: torch.Tensor, rng: np.random.Generator) -> np.ndarray:
    """One categorical draw per row of `logits` [B, A] with a numpy RNG (reproducible)."""
    probs = torch.softmax(logits.float(), dim=-1).numpy().astype(np.float64)
    cdf = np.cumsum(probs, axis=-1)
    u = rng.random(len(probs))[:, None] * cdf[:, -1:]
    return np.minimum((cdf < u).sum(axis=-1), probs.shape[-1] - 1).astype(np.int64)


def _tensors(weights: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {k: torch.as_tensor(np.asarray(v)) for k, v in weights.items()}


def _linear_stack(weights: Mapping[str, torch.Tensor], prefix: str) -> list[nn.Linear]:
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.weight$")
    indices = sorted(int(m.group(1)) for k in weights if (m := pattern.match(k)))
    layers = []
    for i in indices:
        weight, bias = weights[f"{prefix}{i}.weight"], weights.get(f"{prefix}{i}.bias")
        layer = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
        layer.load_state_dict({"weight": weight, **({"bias": bias} if bias is not None else {})})
        layers.append(layer)
    return layers


def mlp_policy_net(weights: Mapping[str, Any], *, activation: str) -> nn.Sequential:
    """The policy path (encoder + pi head) of RLlib's default PPO MLP as one Sequential."""
    tensors = _tensors(weights)
    prefix = next((p for p in _ENCODER_PREFIXES if f"{p}0.weight" in tensors), None)
    head = _linear_stack(tensors, _HEAD_PREFIX)
    if prefix is None or not head:
        raise UserError(
            "weights are not an RLlib default MLP policy (no encoder.*.net.mlp.0 / pi.net.mlp.0 "
            f"tensors; got {sorted(tensors)[:6]}...)"
        )
    act = _ACTIVATIONS.get(activation)
    if act is None:
        raise UserError(f"unsupported MLP activation {activation!r}; known: {sorted(_ACTIVATIONS)}")
    modules: list[nn.Module] = []
    for layer in _linear_stack(tensors, prefix):
        modules += [layer, act()]
    for i, layer in enumerate(head):
        modules += [layer] if i == len(head) - 1 else [layer, nn.ReLU()]
    return nn.Sequential(*modules).eval()


class MLPPolicy:
    def __init__(self, net: nn.Module) -> None:
        self.net = net

    @torch.no_grad()
    def __call__(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return sample_actions(self.net(torch.as_tensor(obs, dtype=torch.float32)), rng)


class RecurrentPolicy:
    """LSTM / transformer_lstm net stepping one frame at a time for a fixed batch of games."""

    def __init__(self, net: nn.Module, *, split: tuple[slice, slice] | None, history: int) -> None:
        self.net, self.split, self.history = net, split, history
        self.state: dict[str, torch.Tensor] | None = None
        self.frames: np.ndarray | None = None
        self.mask: np.ndarray | None = None

    def _inputs(self, obs: np.ndarray) -> Any:
        if self.split is None:
            return torch.as_tensor(obs, dtype=torch.float32)[:, None]
        own, opponent = obs[:, self.split[0]], obs[:, self.split[1]]
        if self.frames is None:
            self.frames = np.zeros((len(obs), self.history, opponent.shape[1]), np.float32)
            self.mask = np.zeros((len(obs), self.history), np.float32)
        # Oldest first, newest last (the OpponentHistory connector's window layout).
        self.frames = np.concatenate([self.frames[:, 1:], opponent[:, None]], axis=1)
        self.mask = np.concatenate([self.mask[:, 1:], np.ones((len(obs), 1), np.float32)], 1)
        return {
            "obs": torch.as_tensor(own, dtype=torch.float32)[:, None],
            "opponent_history": torch.as_tensor(self.frames)[:, None],
            "history_mask": torch.as_tensor(self.mask)[:, None],
        }

    @torch.no_grad()
    def __call__(self, obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float32)
        if self.state is None:
            initial = self.net.initial_state()
            self.state = {k: v[None].repeat(len(obs), 1) for k, v in initial.items()}
        embeddings, self.state = self.net.encode(self._inputs(obs), self.state, None)
        return sample_actions(self.net.policy(embeddings, None)[:, 0], rng)


def _recurrent_factory(
    model_type: str, settings: Mapping[str, Any], weights: Mapping[str, Any], obs_dim: int, n: int
) -> PolicyFactory:
    from rl_platform.connectors.history_window import ObsSplit
    from rl_platform.spec.model import LSTMModelSpec, TransformerLSTMModelSpec

    tensors = _tensors(weights)
    state = {k.removeprefix("net."): v for k, v in tensors.items() if k.startswith("net.")}
    state |= {k: v for k, v in tensors.items() if k.startswith("critic.")}
    action_space = gym.spaces.Discrete(n)
    split, history = None, 1
    if model_type == "lstm":
        from rl_platform.modules.lstm_net import LSTMActorCriticNet

        config, _ = LSTMModelSpec.from_model_config(dict(settings))
        net: nn.Module = LSTMActorCriticNet(
            obs_dim=obs_dim, action_space=action_space, config=config
        )
    else:
        from rl_platform.modules.transformer_lstm_net import TransformerLSTMNet

        config, _ = TransformerLSTMModelSpec.from_model_config(dict(settings))
        parts = ObsSplit.from_config(config.obs_split or {})
        if parts.uses_keys:
            raise UserError("tournaments need index-range obs_split for transformer_lstm")
        split = (slice(*parts.self_part), slice(*parts.opponent_part))
        history = config.history
        net = TransformerLSTMNet(
            obs_dim=split[0].stop - split[0].start,
            frame_dim=split[1].stop - split[1].start,
            action_space=action_space,
            config=config,
        )
    try:
        net.load_state_dict(state)
    except RuntimeError as err:
        raise UserError(f"weights do not fit the run's {model_type} model: {err}") from None
    net.eval()
    return lambda: RecurrentPolicy(net, split=split, history=history)


def policy_factory(
    *, model: Any, weights: Mapping[str, Any], obs_dim: int, num_actions: int
) -> PolicyFactory:
    """A maker of fresh policies for `weights` under the spec's `model` section."""
    if model.type in ("default", "mlp"):
        net = mlp_policy_net(weights, activation=model.activation)
        return lambda: MLPPolicy(net)
    if model.type in ("lstm", "transformer_lstm"):
        return _recurrent_factory(model.type, model.settings, weights, obs_dim, num_actions)
    raise UserError(f"tournaments do not support model.type {model.type!r}")
