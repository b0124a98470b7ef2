"""Learners of the off-policy array path: SAC and DQN updates straight from a `ReplayStore`.

RLlib's SAC/DQN learners take episodes from RLlib's replay buffer through learner
connectors. These learners hold our update steps instead (rl_platform/learners/sac_step.py,
dqn_step.py) over the nets of the module RLlib built (rl_platform/modules/
off_policy_modules.py), and the path's driver (rl_platform/rllib/off_policy.py) calls
`update_from_store` with the replay store; `update` through RLlib is not used.

The steps' Adam optimizers are registered with RLlib (`register_optimizer`), so the learner's
state (and every checkpoint) holds their moments as it holds any RLlib optimizer's, and the
update step's own generator (SAC's action noise) travels in the learner's state under
`GENERATOR_STATE_KEY`: a resumed run draws what the uninterrupted one would have.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.utils.annotations import override

from rl_platform.learners.device_adam import prepare_state
from rl_platform.learners.dqn_step import DQNSettings, DQNStep
from rl_platform.learners.sac_step import SACNets, SACSettings, SACStep
from rl_platform.replay.prioritized import PrioritizedSampler
from rl_platform.replay.store import ReplayStore

OFF_POLICY_KEY = "rlp_off_policy"
"""`learner_config_dict` key of the learner's `OffPolicyLearnerSettings`."""
GENERATOR_STATE_KEY = "rlp_step_generator"
"""Learner state key of the update step's generator state (uint8 array)."""


@dataclass(frozen=True)
class OffPolicyLearnerSettings:
    batch_size: int
    seed: int
    sac: SACSettings | None = None
    dqn: DQNSettings | None = None


class _StoreLearner(TorchLearner):
    """What both learners share: updates from the store, metrics, the generator's state."""

    step: Any
    generator: torch.Generator

    def settings(self) -> OffPolicyLearnerSettings:
        return self.config.learner_config_dict[OFF_POLICY_KEY]

    def _register(self, module_id: str, names: list[str]) -> None:
        """Hand the step's optimizers to RLlib, so its state and checkpoints hold them."""
        for name, optimizer in zip(names, self.step.optimizers.optimizers, strict=True):
            params = [p for group in optimizer.param_groups for p in group["params"]]
            self.register_optimizer(
                module_id=module_id, optimizer_name=name, optimizer=optimizer, params=params
            )

    def _new_generator(self, device: torch.device) -> torch.Generator:
        self.generator = torch.Generator(device=device)
        self.generator.manual_seed(self.settings().seed)
        return self.generator

    @override(TorchLearner)
    def compute_loss_for_module(self, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "the off-policy array learner updates through update_from_store (its driver: "
            "rl_platform/rllib/off_policy.py), not through RLlib's update"
        )

    def update_from_store(self, store: ReplayStore, num_updates: int) -> None:
        """`num_updates` updates, each on a batch sampled from `store`; priorities follow
        the TD errors where the store samples by them."""
        batch_size = self.settings().batch_size
        for _ in range(num_updates):
            batch = store.sample(batch_size)
            td_errors = self.step(batch)
            if isinstance(store.sampler, PrioritizedSampler):
                store.sampler.update_priorities(batch.indices, td_errors)

    def read_metrics(self) -> dict[str, float]:
        """The means of the updates since the last read (one host read)."""
        return self.step.metrics.read()

    @override(TorchLearner)
    def get_state(self, components: Any = None, **kwargs: Any) -> dict[str, Any]:
        state = super().get_state(components, **kwargs)
        if components is None:
            state[GENERATOR_STATE_KEY] = self.generator.get_state().numpy()
        return state

    @override(TorchLearner)
    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        for optimizer in self.step.optimizers.optimizers:
            prepare_state(optimizer)  # loaded step counters back on the parameters' device
        if GENERATOR_STATE_KEY in state:
            saved = np.asarray(state[GENERATOR_STATE_KEY], dtype=np.uint8)
            self.generator.set_state(torch.from_numpy(saved))


class ArraySACLearner(_StoreLearner):
    """SAC on the replay store (module docstring)."""

    @override(TorchLearner)
    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        module = self.module[module_id]
        nets = SACNets(
            actor=module.actor,
            critics=tuple(module.critics),
            target_critics=tuple(module.target_critics),
            log_alpha=module.log_alpha,
        )
        settings = self.settings().sac
        assert settings is not None
        generator = self._new_generator(module.log_alpha.device)
        self.step = SACStep(nets, settings, generator=generator)
        critics = ["critic", "critic_twin"][: len(nets.critics)]
        self._register(module_id, [*critics, "actor", "alpha"])


class ArrayDQNLearner(_StoreLearner):
    """DQN on the replay store (module docstring)."""

    @override(TorchLearner)
    def configure_optimizers_for_module(self, module_id: str, config: Any = None) -> None:
        module = self.module[module_id]
        settings = self.settings().dqn
        assert settings is not None
        self._new_generator(next(module.q_net.parameters()).device)
        self.step = DQNStep(module.q_net, module.target_q_net, settings)
        self._register(module_id, ["q"])

    def sync_target(self, tau: float) -> None:
        self.step.sync_target(tau)
