"""How the off-policy array path picks actions (pure torch, no Ray).

Each acting object returns two things per step: the actions the replay store keeps and the
actions the envs get. For SAC they differ (rl_platform/nets/squashed_gaussian.py): the store
keeps the module's [-1, 1] actions, the envs get them scaled to their bounds (RLlib's
`unsquash_action`); for DQN both are the action indices. `random` is the warm-up before
`num_steps_sampled_before_learning_starts`: uniform actions of the space (SAC: uniform in
[-1, 1], as CleanRL's and SB3's warm-up; RLlib's SAC acts with its untrained policy instead).
Every draw comes from the object's own `generator`, which a checkpoint keeps.
"""

from collections.abc import Sequence

import numpy as np
import torch

from rl_platform.nets.q_nets import DiscreteQNet
from rl_platform.nets.squashed_gaussian import SquashedGaussianActor, to_env_bounds

Actions = tuple[torch.Tensor, np.ndarray]
"""(actions for the store, on the acting device; actions for the envs, numpy)."""


class SACActing:
    def __init__(
        self,
        actor: SquashedGaussianActor,
        *,
        low: Sequence[float] | np.ndarray,
        high: Sequence[float] | np.ndarray,
        generator: torch.Generator,
    ) -> None:
        self.actor, self.generator = actor, generator
        device = next(actor.parameters()).device
        self.low = torch.as_tensor(np.asarray(low, np.float32), device=device)
        self.high = torch.as_tensor(np.asarray(high, np.float32), device=device)

    def act(self, obs: torch.Tensor) -> Actions:
        with torch.no_grad():
            actions, _ = self.actor.sample(obs, generator=self.generator)
        return actions, self._to_env(actions)

    def random(self, num_envs: int) -> Actions:
        shape = (num_envs, *self.low.shape)
        uniform = torch.rand(shape, generator=self.generator, device=self.low.device)
        actions = uniform * 2.0 - 1.0
        return actions, self._to_env(actions)

    def _to_env(self, actions: torch.Tensor) -> np.ndarray:
        return to_env_bounds(actions, self.low, self.high).cpu().numpy()


def epsilon_at(env_steps: int, *, timesteps: int, final: float) -> float:
    """RLlib's DQN epsilon schedule `[(0, 1.0), (timesteps, final)]`: linear, then held."""
    fraction = min(env_steps / timesteps, 1.0)
    return 1.0 + fraction * (final - 1.0)


class DQNActing:
    """Epsilon-greedy on `q_net` (the epsilon is set by the caller before each step)."""

    def __init__(self, q_net: DiscreteQNet, *, num_actions: int, generator: torch.Generator):
        self.q_net, self.num_actions, self.generator = q_net, num_actions, generator
        self.device = next(q_net.parameters()).device
        self.epsilon = 1.0

    def act(self, obs: torch.Tensor) -> Actions:
        with torch.no_grad():
            greedy = self.q_net(obs).argmax(dim=-1)
        draws = torch.rand(greedy.shape, generator=self.generator, device=self.device)
        randoms = self._uniform(greedy.shape[0])
        actions = torch.where(draws < self.epsilon, randoms, greedy)
        return actions, actions.cpu().numpy()

    def random(self, num_envs: int) -> Actions:
        actions = self._uniform(num_envs)
        return actions, actions.cpu().numpy()

    def _uniform(self, n: int) -> torch.Tensor:
        return torch.randint(self.num_actions, (n,), generator=self.generator, device=self.device)
