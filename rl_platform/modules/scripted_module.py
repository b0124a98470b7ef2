"""`ScriptedRLModule`: a parameter-free RLModule that plays a scripted league agent.

model_config: `{"env_id": <env id>, "agent": <scripted agent>, "seed": int | None}`, where the
agent is a registry name, `random`, or a user's `package.module:act_fn` (teachers/registry.py).
The module returns `Columns.ACTIONS` directly (like RLlib's heuristic example modules in
ray/rllib/examples/rl_modules/classes/rock_paper_scissors_heuristic_rlm.py), so no action
distribution is sampled. It is a plain `RLModule`, not a torch one: torch learners give every
`nn.Module` an optimizer, which fails without parameters. Never put it in `policies_to_train`.
"""

from typing import Any

import numpy as np
import torch
import tree
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.utils.annotations import override

from rl_platform.modules.config_notice import WithoutConfigNotice
from rl_platform.teachers import scripted_act


def _to_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


class ScriptedRLModule(WithoutConfigNotice, RLModule):
    """Acts with `rl_platform.teachers.scripted_act(env_id, agent)`; not trainable."""

    @override(RLModule)
    def setup(self) -> None:
        config = dict(self.model_config or {})
        self.agent_name = str(config["agent"])
        self._act = scripted_act(
            env_id=str(config["env_id"]), agent=self.agent_name, action_space=self.action_space
        )
        # A seeded stream keeps runs reproducible; stochastic agents (random, based) use it.
        self._rng = np.random.default_rng(config.get("seed"))

    @override(RLModule)
    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = tree.map_structure(_to_numpy, batch[Columns.OBS])
        actions = np.asarray(self._act(obs, self._rng), dtype=np.int64)
        return {Columns.ACTIONS: actions}

    @override(RLModule)
    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(
            f"scripted league agent {self.agent_name!r} is not trainable; keep its module out "
            "of policies_to_train"
        )
