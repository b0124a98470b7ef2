"""MLP actor-critic RLModule that masks illegal actions (`model.type: mlp` on masked envs).

`rl_platform/rllib/rl_module_spec.py` picks this module instead of RLlib's stock PPO
module when the env observes RLlib's action-masking Dict
`{"observations": Box, "action_mask": Box(0, 1, (A,))}` (as in
ray/rllib/examples/rl_modules/classes/action_masking_rlm.py), which RLlib's catalog cannot
encode. Plain Box observations keep RLlib's stock module; this module accepts them too (no
mask), e.g. for tests.

model_config keys: those of the spec's `mlp` model, `hidden` [256, 256], `activation` tanh,
`vf_share_layers` false (rl_platform/spec/model_types/mlp.py, MLPModelSpec). Network:
rl_platform/nets/masked_mlp_net.py. Actions: Discrete, MultiDiscrete (masks allowed),
1-D Box (no mask).

Batch contract (not stateful: no time axis, no state): forward passes read
`batch[Columns.OBS]` and return Columns.ACTION_DIST_INPUTS with masked logits set to the
dtype's most negative value; `forward_train` also returns Columns.EMBEDDINGS, the critic's
input, which `compute_values` (ValueFunctionAPI; PPO, APPO, IMPALA) reuses. BC learners read
the same masked ACTION_DIST_INPUTS. TargetNetworkAPI (APPO) copies the policy path;
InferenceOnlyAPI drops that copy and the critic on env runners.
"""

import dataclasses
from typing import Any

import gymnasium as gym
import torch
from loguru import logger
from ray.rllib.core.columns import Columns
from ray.rllib.core.learner.utils import make_target_network
from ray.rllib.core.rl_module.apis import (
    TARGET_NETWORK_ACTION_DIST_INPUTS,
    InferenceOnlyAPI,
    TargetNetworkAPI,
    ValueFunctionAPI,
)
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.utils.annotations import override
from torch import nn

from rl_platform.base.errors import SpecError
from rl_platform.base.observation_keys import ACTION_MASK_KEY, MASKED_OBS_KEY
from rl_platform.modules.config_notice import WithoutConfigNotice
from rl_platform.modules.recurrent_module import RLLIB_MODEL_KEYS, action_dist_cls_for
from rl_platform.nets.action_mask_space import is_action_mask_space
from rl_platform.nets.blocks import action_dist_input_dim
from rl_platform.nets.masked_mlp_net import MaskedMLPNet
from rl_platform.spec.model_types.mlp import MLPModelSpec


def _masked_obs_space(space: gym.Space) -> tuple[gym.spaces.Box, int | None]:
    """(observation Box, mask length or None) for a Box or an action-masking Dict."""
    if isinstance(space, gym.spaces.Box):
        return space, None
    if is_action_mask_space(space):
        return space[MASKED_OBS_KEY], int(space[ACTION_MASK_KEY].shape[-1])
    raise SpecError(
        [
            f"model.type mlp: observations must be a Box or {{'{MASKED_OBS_KEY}': Box, "
            f"'{ACTION_MASK_KEY}': Box}}, got {space}; add `flatten_obs` to env.wrappers to "
            "flatten other observations"
        ],
        source="model",
    )


class MaskedMLPModule(
    WithoutConfigNotice, TorchRLModule, ValueFunctionAPI, TargetNetworkAPI, InferenceOnlyAPI
):
    """MLP actor-critic with action masking; see the module docstring."""

    @override(TorchRLModule)
    def setup(self) -> None:
        raw = self.model_config
        raw = dataclasses.asdict(raw) if dataclasses.is_dataclass(raw) else dict(raw or {})
        parsed, unknown = MLPModelSpec.from_model_config(raw)
        ignored = [k for k in unknown if k not in RLLIB_MODEL_KEYS and k != "settings"]
        if ignored:
            logger.warning("MaskedMLPModule: ignoring unknown model keys {}", ignored)
        self.model_config = {**raw, **parsed.settings}
        obs_space, mask_len = _masked_obs_space(self.observation_space)
        self._has_action_mask = mask_len is not None
        if mask_len is not None:
            self._check_mask(mask_len)
        self.net = MaskedMLPNet(
            obs_shape=tuple(obs_space.shape), action_space=self.action_space, config=parsed
        )
        # Top-level critic so InferenceOnlyAPI can drop it on env runners (RLlib 2.60
        # mishandles dotted attribute paths there; see recurrent_module.py).
        self.critic = self.net.critic
        del self.net.critic
        self.action_dist_cls = action_dist_cls_for(self.action_space)

    def _check_mask(self, mask_len: int) -> None:
        if isinstance(self.action_space, gym.spaces.Box):
            raise SpecError(
                ["an `action_mask` observation needs a Discrete or MultiDiscrete action space"],
                source="model",
            )
        logits = action_dist_input_dim(self.action_space)
        if mask_len != logits:
            raise SpecError(
                [f"action_mask has {mask_len} entries but {self.action_space} has {logits}"],
                source="model",
            )

    def _inputs(self, batch: dict[str, Any]) -> tuple[torch.Tensor, torch.Tensor | None]:
        obs = batch[Columns.OBS]
        if self._has_action_mask:
            return obs[MASKED_OBS_KEY], obs[ACTION_MASK_KEY]
        return obs, None

    @override(TorchRLModule)
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, action_mask = self._inputs(batch)
        return {Columns.ACTION_DIST_INPUTS: self.net.policy(obs, action_mask)}

    @override(TorchRLModule)
    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs, action_mask = self._inputs(batch)
        logits, embeddings = self.net.forward_train(obs, action_mask)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.EMBEDDINGS: embeddings}

    @override(ValueFunctionAPI)
    def compute_values(
        self, batch: dict[str, Any], embeddings: torch.Tensor | None = None
    ) -> torch.Tensor:
        if embeddings is None:
            embeddings = self.net.embed(self._inputs(batch)[0])
        return self.critic(embeddings)

    @override(TargetNetworkAPI)
    def make_target_networks(self) -> None:
        self._target_net = make_target_network(self.net)

    @override(TargetNetworkAPI)
    def get_target_network_pairs(self) -> list[tuple[nn.Module, nn.Module]]:
        return [(self.net, self._target_net)]

    @override(TargetNetworkAPI)
    def forward_target(self, batch: dict[str, Any]) -> dict[str, Any]:
        obs, action_mask = self._inputs(batch)
        return {TARGET_NETWORK_ACTION_DIST_INPUTS: self._target_net.policy(obs, action_mask)}

    @override(InferenceOnlyAPI)
    def get_non_inference_attributes(self) -> list[str]:
        return ["_target_net", "critic"]
