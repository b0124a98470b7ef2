"""Shared Ray adapter for our recurrent actor-critic RLModules (LSTM and transformer_lstm).

The network itself is a plain torch module (`self.net`) with this duck-typed interface:
    initial_state() -> {"h": [C], "c": [C], ...further keys, e.g. the streaming encoder's cache}
    encode(inputs, state {"h": [B, C], "c": [B, C], ...}, seq_lens | None)
        -> (embeddings [B, T, E], new state)   (E = C, wider with `lstm_skip`)
    policy(embeddings, action_mask | None) -> ACTION_DIST_INPUTS [B, T, A]
    critic_observation(inputs) -> [B, T, critic input]; critic_reads_memory: bool
    critic: nn.Module, critic input -> values [B, T] (moved to `self.critic` by the adapter)
Subclasses build the net and map `batch[Columns.OBS]` to its `inputs` (+ optional mask).

Batch contract (RLlib new API stack, cf. ray/rllib/examples/rl_modules/classes/
lstm_containing_rlm.py): the module is stateful, so RLlib's AddTimeDimToBatchAndZeroPad
connector gives every forward pass a time axis: T = 1 on env runners, T = max_seq_len
zero-padded chunks (+ Columns.SEQ_LENS, Columns.LOSS_MASK) on learners. Columns.STATE_IN holds
the state at the start of each row ({"h", "c"}: [B, C]); forward passes return
Columns.STATE_OUT (state after the last valid step), Columns.ACTION_DIST_INPUTS and, in
`forward_train`, Columns.EMBEDDINGS, the critic's input, for `compute_values`
(ValueFunctionAPI, used by PPO, IMPALA and APPO): the trunk's output, or the current
observation with `critic_input: observation`. TargetNetworkAPI (APPO) copies the policy path
(trunk + actor); InferenceOnlyAPI drops that copy and the critic on env runners.
"""

import dataclasses
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from loguru import logger
from ray.rllib.core.columns import Columns
from ray.rllib.core.distribution.torch.torch_distribution import (
    TorchCategorical,
    TorchDiagGaussian,
    TorchMultiCategorical,
)
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.rl_module.apis import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    InferenceOnlyAPI,
    TargetNetworkAPI,
    ValueFunctionAPI,
)
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.annotations import override
from torch import nn

from rl_platform.base.errors import SpecError
from rl_platform.modules.config_notice import WithoutConfigNotice

RESETS = "resets"
"""Batch column of the array learner's sequences, `[B, T]` bool: an episode starts at each
marked step, where the network's state restarts (instead of RLlib's `seq_lens` padding)."""

# Keys RLlib itself may merge into model_config (DefaultModelConfig fields, algorithm
# auto-includes such as APPO's vf_share_layers); not worth a warning when we ignore them.
RLLIB_MODEL_KEYS = {f.name for f in dataclasses.fields(DefaultModelConfig)} | {
    "vf_share_layers",
    "type",
}


def action_dist_cls_for(action_space: gym.Space) -> type:
    """RLlib torch distribution matching the heads in rl_platform/nets/blocks.py."""
    if isinstance(action_space, gym.spaces.Discrete):
        return TorchCategorical
    if isinstance(action_space, gym.spaces.MultiDiscrete):
        # Same partial-class construction as RLlib's catalog
        # (ray/rllib/core/models/catalog.py, _multi_categorical_dist_partial_helper).
        return TorchMultiCategorical.get_partial_dist_cls(
            space=action_space, input_lens=[int(n) for n in action_space.nvec]
        )
    if isinstance(action_space, gym.spaces.Box) and len(action_space.shape) == 1:
        return TorchDiagGaussian
    raise SpecError(
        [f"action space {action_space} is not supported: use Discrete, MultiDiscrete or 1-D Box"],
        source="model",
    )


class RecurrentActorCriticModule(
    WithoutConfigNotice, TorchRLModule, ValueFunctionAPI, TargetNetworkAPI, InferenceOnlyAPI
):
    """Base class; subclasses implement `build_net` and `net_inputs` (see module docstring)."""

    config_cls: type  # LSTMModelSpec or TransformerLSTMModelSpec, set by subclasses

    @override(TorchRLModule)
    def setup(self) -> None:
        raw = self.model_config
        raw = dataclasses.asdict(raw) if dataclasses.is_dataclass(raw) else dict(raw or {})
        parsed, unknown = self.config_cls.from_model_config(raw)
        ignored = [k for k in unknown if k not in RLLIB_MODEL_KEYS and k != "settings"]
        if ignored:
            logger.warning("{}: ignoring unknown model keys {}", type(self).__name__, ignored)
        # Write defaults back: RLlib's AddTimeDimToBatchAndZeroPad reads
        # `module.model_config["max_seq_len"]` directly.
        self.model_config = {**raw, **parsed.settings}
        self.parsed_config = parsed
        self.net = self.build_net(parsed)
        # The critic moves to the top level so InferenceOnlyAPI can drop it on env runners:
        # RLlib 2.60 mishandles dotted attribute paths there (TorchRLModule.__init__ deletes
        # the last path part from the module itself, not from its parent).
        self.critic = self.net.critic
        del self.net.critic
        self.action_dist_cls = action_dist_cls_for(self.action_space)

    def build_net(self, config: Any) -> nn.Module:
        raise NotImplementedError

    def net_inputs(self, obs: Any) -> tuple[Any, torch.Tensor | None]:
        """batch[Columns.OBS] -> (net inputs, action mask or None)."""
        raise NotImplementedError

    def check_action_mask(self, has_mask: bool) -> None:
        if has_mask and isinstance(self.action_space, gym.spaces.Box):
            raise SpecError(
                ["an `action_mask` observation needs a Discrete or MultiDiscrete action space"],
                source="model",
            )

    @override(TorchRLModule)
    def get_initial_state(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy() for k, v in self.net.initial_state().items()}

    def _run(
        self, batch: dict[str, Any], net: nn.Module
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor], torch.Tensor | None, Any]:
        # Never mutate `batch`: the GAE connector calls compute_values on the same batch
        # that forward_train later receives.
        inputs, action_mask = self.net_inputs(batch[Columns.OBS])
        embeddings, state_out = net.encode(
            inputs, batch[Columns.STATE_IN], batch.get(Columns.SEQ_LENS), batch.get(RESETS)
        )
        return embeddings, state_out, action_mask, inputs

    @override(TorchRLModule)
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        embeddings, state_out, action_mask, _ = self._run(batch, self.net)
        return {
            Columns.ACTION_DIST_INPUTS: self.net.policy(embeddings, action_mask),
            Columns.STATE_OUT: state_out,
        }

    @override(TorchRLModule)
    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        embeddings, state_out, action_mask, inputs = self._run(batch, self.net)
        value_input = (
            embeddings if self.net.critic_reads_memory else self.net.critic_observation(inputs)
        )
        return {
            Columns.ACTION_DIST_INPUTS: self.net.policy(embeddings, action_mask),
            Columns.STATE_OUT: state_out,
            Columns.EMBEDDINGS: value_input,
            **self.auxiliary_outputs(embeddings),
        }

    def auxiliary_outputs(self, embeddings: torch.Tensor) -> dict[str, torch.Tensor]:
        """Extra `forward_train` outputs for auxiliary losses (none by default)."""
        return {}

    @override(ValueFunctionAPI)
    def compute_values(
        self, batch: dict[str, Any], embeddings: torch.Tensor | None = None
    ) -> torch.Tensor:
        """`embeddings`: the critic's input as `forward_train` returned it. Without them, a
        critic on the observation (`critic_input: observation`) skips the trunk."""
        if embeddings is None:
            if self.net.critic_reads_memory:
                embeddings = self._run(batch, self.net)[0]
            else:
                embeddings = self.net.critic_observation(self.net_inputs(batch[Columns.OBS])[0])
        return self.critic(embeddings)

    @override(TargetNetworkAPI)
    def make_target_networks(self) -> None:
        self._target_net = make_target_network(self.net)

    @override(TargetNetworkAPI)
    def get_target_network_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return [(self.net, self._target_net)]

    @override(TargetNetworkAPI)
    def forward_target(self, batch: dict[str, Any]) -> dict[str, Any]:
        embeddings, _, action_mask, _ = self._run(batch, self._target_net)
        return {TARGET_NETWORK_ACTION_DIST_INPUTS: self._target_net.policy(embeddings, action_mask)}

    @override(InferenceOnlyAPI)
    def get_non_inference_attributes(self) -> list[str]:
        return ["_target_net", "critic"]
