"""`ReplayStore`: the off-policy fast path's replay memory, fixed tensors on one device.

RLlib's `EpisodeReplayBuffer` keeps episode objects and builds each batch from them in Python
(issue #57: most of a SAC update on 2 cores). Here every field is one preallocated tensor of
`[slots, num_envs, ...]` rows (obs, action, reward, next_obs, terminated, truncated); `add`
writes the step of all `num_envs` envs into the slot under the write cursor, which wraps and
overwrites the oldest slot; a batch is a gather by device indices. The cursor and the count
of filled slots are host integers (the host calls `add`, so it knows them without asking the
device), which keeps sampling free of host reads.

`next_obs` is stored, not read from the next row: a truncated step's next observation is the
final one, which the next row (a new episode's first) does not hold. n-step windows are read
at sample time (`rl_platform/replay/n_step.py`); which rows are drawn is the sampler's
(`training.replay`: uniform or prioritized).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import torch

from rl_platform.replay.layout import REWARD_DTYPE, TransitionLayout, slots_for, store_bytes
from rl_platform.replay.memory_fit import check_fits
from rl_platform.replay.n_step import WindowReader
from rl_platform.replay.prioritized import PrioritizedSampler, PrioritySettings
from rl_platform.replay.sampler import Sampler, UniformSampler

FIELDS = ("obs", "actions", "rewards", "next_obs", "terminated", "truncated")
"""The stored tensors, each `[slots, num_envs, ...]`."""
SAMPLER_PREFIX = "sampler/"


@dataclass(frozen=True)
class ReplayBatch:
    """A sampled batch: n-step `rewards`, `next_obs` and flags of each window's last step."""

    obs: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    next_obs: torch.Tensor
    terminated: torch.Tensor
    """[B] float 0/1: the bootstrap is masked where 1."""
    truncated: torch.Tensor
    n_steps: torch.Tensor
    """[B] float, each window's length: the bootstrap's discount is gamma**n_steps."""
    weights: torch.Tensor
    """[B] importance weights (1 when sampled uniformly)."""
    indices: torch.Tensor
    """[B] the rows drawn, for `PrioritizedSampler.update_priorities`."""


class ReplayStore:
    """Transitions of `num_envs` envs in fixed device tensors (module docstring)."""

    def __init__(
        self,
        *,
        layout: TransitionLayout,
        capacity: int,
        num_envs: int,
        device: torch.device | str,
        replay: Literal["uniform", "prioritized"] = "uniform",
        priority: PrioritySettings | None = None,
        n_step: int = 1,
        gamma: float = 0.99,
        seed: int = 0,
    ) -> None:
        self.device, self.num_envs = torch.device(device), num_envs
        self.n_step, self.gamma = n_step, gamma
        check_fits(
            partial(store_bytes, layout, num_envs=num_envs, prioritized=replay == "prioritized"),
            capacity=capacity,
            device=self.device,
        )
        self.slots = slots_for(capacity, num_envs)
        self.windows = WindowReader(
            slots=self.slots, num_envs=num_envs, n_step=n_step, gamma=gamma, device=self.device
        )
        self._allocate(layout)
        self.cursor, self.filled = 0, 0
        self.generator = torch.Generator(device=self.device)
        self.generator.manual_seed(seed)
        self.sampler: Sampler = (
            PrioritizedSampler(
                self.slots * num_envs, settings=priority or PrioritySettings(), device=self.device
            )
            if replay == "prioritized"
            else UniformSampler(device=self.device)
        )
        self._env_rows = torch.arange(num_envs, device=self.device)

    def _allocate(self, layout: TransitionLayout) -> None:
        rows = (self.slots, self.num_envs)

        def zeros(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
            return torch.zeros((*rows, *shape), dtype=dtype, device=self.device)

        self.obs = zeros(layout.obs_shape, layout.obs_dtype)
        self.next_obs = zeros(layout.obs_shape, layout.obs_dtype)
        self.actions = zeros(layout.action_shape, layout.action_dtype)
        self.rewards = zeros((), REWARD_DTYPE)
        self.terminated = zeros((), torch.bool)
        self.truncated = zeros((), torch.bool)
        # Views of the same memory by flat row (`slot * num_envs + env`): a batch is one
        # 1-d index per field (module docstring of rl_platform/replay/n_step.py).
        self._flat = {name: getattr(self, name).flatten(0, 1) for name in FIELDS}

    @property
    def size(self) -> int:
        """Transitions stored."""
        return self.filled * self.num_envs

    def add(
        self,
        *,
        obs: torch.Tensor,
        actions: torch.Tensor,
        rewards: torch.Tensor,
        next_obs: torch.Tensor,
        terminated: torch.Tensor,
        truncated: torch.Tensor,
    ) -> None:
        """One step of every env (each argument `[num_envs, ...]`, any device or dtype that
        converts); overwrites the oldest slot once the store is full."""
        slot = self.cursor
        new = (obs, actions, rewards, next_obs, terminated, truncated)
        for name, value in zip(FIELDS, new, strict=True):
            getattr(self, name)[slot].copy_(torch.as_tensor(value))
        self.sampler.added(slot * self.num_envs + self._env_rows)
        self.cursor = (slot + 1) % self.slots
        self.filled = min(self.filled + 1, self.slots)

    def cut_episodes(self, envs: Sequence[int]) -> None:
        """End the episodes of `envs` at their newest row: mark it truncated, so n-step
        windows stop there and its `next_obs` still bootstraps (a truncation does not mask
        it). For episodes that will not continue in the next row: a resume restarts them
        (rl_platform/sampling/transition_collector.py)."""
        if self.filled == 0 or len(envs) == 0:
            return
        newest = (self.cursor - 1) % self.slots
        self.truncated[newest, torch.as_tensor(list(envs), device=self.device)] = True

    def sample(self, batch_size: int) -> ReplayBatch:
        """`batch_size` transitions drawn by the sampler, with their n-step windows."""
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay store")
        indices, weights = self.sampler.sample(batch_size, size=self.size, generator=self.generator)
        return self.gather(indices, weights)

    def gather(self, indices: torch.Tensor, weights: torch.Tensor) -> ReplayBatch:
        """The batch of rows `indices` (flat: `slot * num_envs + env`)."""
        flat = self._flat
        window = self.windows.read(
            rewards=flat["rewards"],
            terminated=flat["terminated"],
            truncated=flat["truncated"],
            indices=indices,
            newest_slot=(self.cursor - 1) % self.slots,
        )
        last = window.last_row
        return ReplayBatch(
            obs=flat["obs"].index_select(0, indices),
            actions=flat["actions"].index_select(0, indices),
            rewards=window.rewards,
            next_obs=flat["next_obs"].index_select(0, last),
            terminated=flat["terminated"].index_select(0, last).to(REWARD_DTYPE),
            truncated=flat["truncated"].index_select(0, last).to(REWARD_DTYPE),
            n_steps=window.steps,
            weights=weights,
            indices=indices,
        )

    def state_dict(self) -> dict[str, torch.Tensor]:
        """The filled slots (views, in slot order), the cursor, the sampler's state and the
        generator's: flat tensors, as `safetensors.torch.save_file` takes them."""
        state = {name: getattr(self, name)[: self.filled] for name in FIELDS}
        state |= {
            "cursor": torch.tensor(self.cursor),
            "filled": torch.tensor(self.filled),
            "num_envs": torch.tensor(self.num_envs),
            "generator": self.generator.get_state(),
        }
        sampler = self.sampler.state_dict(self.size)
        return state | {SAMPLER_PREFIX + key: value for key, value in sampler.items()}

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        """Restore what `state_dict` returned: the same rows, cursor, priorities and draws."""
        filled, num_envs = int(state["filled"]), int(state["num_envs"])
        if num_envs != self.num_envs or filled > self.slots:
            raise ValueError(
                f"a saved store of {filled} x {num_envs} rows does not fit "
                f"{self.slots} x {self.num_envs}"
            )
        for name in FIELDS:
            getattr(self, name)[:filled].copy_(state[name])
        self.cursor, self.filled = int(state["cursor"]), filled
        self.generator.set_state(state["generator"].cpu())
        prefix = len(SAMPLER_PREFIX)
        sampler = {k[prefix:]: v for k, v in state.items() if k.startswith(SAMPLER_PREFIX)}
        self.sampler.load_state_dict(sampler, self.size)

    def nbytes(self) -> int:
        """Bytes the rows take (the sum tree not included)."""
        return sum(getattr(self, name).nbytes for name in FIELDS)
