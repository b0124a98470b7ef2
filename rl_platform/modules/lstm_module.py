"""LSTM actor-critic RLModule (`model.type: lstm`): obs -> MLP -> LSTM -> actor / critic.

model_config keys (defaults): encoder [256], lstm_cell_size 512, actor [96, 96],
critic [96, 96], max_seq_len 32, activation relu. Defaults are written back into
`self.model_config` (RLlib's time-dim connector reads `max_seq_len` from there).

Observations: a Box (trailing dims are flattened), or RLlib's action-masking Dict
`{"observations": Box, "action_mask": Box(0, 1, (A,))}` (as in
ray/rllib/examples/rl_modules/classes/action_masking_rlm.py); masked actions get the dtype's
most negative logit, so they are never sampled. Actions: Discrete, MultiDiscrete, 1-D Box.
Batch contract, state layout and algorithm APIs: see recurrent_module.py. Works with PPO,
APPO (TargetNetworkAPI) and IMPALA, single- and multi-agent.
"""

from typing import Any

import gymnasium as gym
import torch
from torch import nn

from rl_platform.base.errors import SpecError
from rl_platform.base.observation_keys import ACTION_MASK_KEY, MASKED_OBS_KEY
from rl_platform.modules.recurrent_module import RecurrentActorCriticModule
from rl_platform.nets.blocks import flat_dim
from rl_platform.nets.lstm_net import LSTMActorCriticNet
from rl_platform.spec.model_types.lstm import LSTMModelSpec


class LSTMActorCriticModule(RecurrentActorCriticModule):
    """LSTM actor-critic; see the module docstring for config keys and spaces."""

    config_cls = LSTMModelSpec

    def build_net(self, config: LSTMModelSpec) -> nn.Module:
        space = self.observation_space
        self._has_action_mask = isinstance(space, gym.spaces.Dict)
        if self._has_action_mask:
            if set(space.spaces) != {MASKED_OBS_KEY, ACTION_MASK_KEY}:
                raise SpecError(
                    [
                        f"lstm: Dict observations must be {{'{MASKED_OBS_KEY}': Box, "
                        f"'{ACTION_MASK_KEY}': Box}}, got keys {sorted(space.spaces)}; "
                        "flatten other Dict observations (env wrapper `flatten_obs`)"
                    ],
                    source="model",
                )
            space = space[MASKED_OBS_KEY]
        self.check_action_mask(self._has_action_mask)
        return LSTMActorCriticNet(
            obs_dim=flat_dim(space), action_space=self.action_space, config=config
        )

    def net_inputs(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        if self._has_action_mask:
            return obs[MASKED_OBS_KEY], obs[ACTION_MASK_KEY]
        return obs, None
