"""`TransitionCollector`: the off-policy array path's acting loop (pure: gymnasium + torch).

RLlib's runner builds a `SingleAgentEpisode` per env, runs the env-to-module and
module-to-env connector pipelines on every step, and its replay buffer later cuts episodes
back into rows. Here one `step` acts for all `num_envs` envs at once (one forward pass,
rl_platform/sampling/off_policy_acting.py), steps each env, and writes the rows straight into
the `ReplayStore` (rl_platform/replay/store.py); episodes exist only as running sums of
return and length, whose last `window` finished values give the usual metrics.

The envs are a plain list, not gymnasium's vector env: an env that ended is reset at the start
of the next step (no autoreset step without a transition, the final observation stays in
`next_obs`), and only each env's RNG needs saving for a resume to continue exactly.

A resume and the episodes in flight. A gymnasium env's state (MuJoCo's physics, a user env's
Python objects, a time limit's counter) cannot be saved in general, so a state holds no
episode in flight: `load_state_dict` starts every env's next episode from its restored RNG.
A state taken between episodes (every env ended on the last step, or never started) thus
continues exactly. For one taken mid-episode, each episode in flight is cut where the state
was taken: its last row in the store is marked truncated (`ReplayStore.cut_episodes`), as a
time limit would end it, so no n-step window runs on into the next episode's rows and the
row still bootstraps from its `next_obs`; its partial return and length are dropped (never
reported as an episode). What a state restores exactly either way: the rows, the RNGs (each
env's, the acting generator) and the window of finished episodes; two resumes from one
state act and write alike. docs/off_policy.md, "Resuming", states the promise.
"""

import json
from collections import deque
from collections.abc import Sequence
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
import torch

from rl_platform.replay.store import ReplayStore
from rl_platform.sampling.off_policy_acting import Actions


class Acting(Protocol):
    generator: torch.Generator

    def act(self, obs: torch.Tensor) -> Actions: ...

    def random(self, num_envs: int) -> Actions: ...


class TransitionCollector:
    """See the module docstring."""

    def __init__(
        self,
        *,
        envs: Sequence[gym.Env],
        store: ReplayStore,
        acting: Acting,
        seeds: Sequence[int | None],
        window: int = 100,
    ) -> None:
        self.envs, self.store, self.acting, self.seeds = list(envs), store, acting, list(seeds)
        n = len(self.envs)
        space = self.envs[0].observation_space
        self.obs = np.zeros((n, *space.shape), dtype=space.dtype)
        self.needs_reset = np.ones(n, dtype=bool)
        self.seeded = False
        self.returns, self.lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
        self.recent: deque[tuple[float, int]] = deque(maxlen=window)
        self.finished = 0
        """Episodes finished since the last `drain_finished`."""

    @property
    def num_envs(self) -> int:
        return len(self.envs)

    def step(self, *, random: bool) -> None:
        """One step of every env: act (uniformly at random where `random`), store the rows."""
        self._reset_ended()
        obs = torch.as_tensor(self.obs, device=self.store.device)
        stored, to_env = (
            self.acting.random(self.num_envs) if random else self.acting.act(obs.float())
        )
        next_obs = np.empty_like(self.obs)
        rewards = np.empty(self.num_envs, dtype=np.float32)
        terminated = np.empty(self.num_envs, dtype=bool)
        truncated = np.empty(self.num_envs, dtype=bool)
        for i, env in enumerate(self.envs):
            next_obs[i], rewards[i], terminated[i], truncated[i], _ = env.step(to_env[i])
        self.store.add(
            obs=obs,
            actions=stored,
            rewards=torch.from_numpy(rewards),
            next_obs=torch.from_numpy(next_obs),
            terminated=torch.from_numpy(terminated),
            truncated=torch.from_numpy(truncated),
        )
        self.returns += rewards
        self.lengths += 1
        self.needs_reset = terminated | truncated
        for i in np.flatnonzero(self.needs_reset):
            self.recent.append((float(self.returns[i]), int(self.lengths[i])))
            self.returns[i], self.lengths[i] = 0.0, 0
            self.finished += 1
        self.obs = next_obs

    def _reset_ended(self) -> None:
        for i in np.flatnonzero(self.needs_reset):
            seed = None if self.seeded else self.seeds[i]
            self.obs[i], _ = self.envs[i].reset(seed=seed)
        self.seeded = True
        self.needs_reset[:] = False

    def drain_finished(self) -> int:
        """Episodes finished since the last call."""
        finished, self.finished = self.finished, 0
        return finished

    def episode_means(self) -> tuple[float, float] | None:
        """(mean return, mean length) of the last `window` finished episodes; None before
        the first."""
        if not self.recent:
            return None
        returns, lengths = zip(*self.recent, strict=True)
        return float(np.mean(returns)), float(np.mean(lengths))

    def state_dict(self) -> dict[str, Any]:
        """Arrays and JSON-able values (rl_platform/utils/state_codec.py stores them)."""
        rngs = [json.dumps(env.unwrapped.np_random.bit_generator.state) for env in self.envs]
        recent = np.asarray(self.recent, dtype=np.float64).reshape(-1, 2)
        in_flight = [int(i) for i in self.in_flight()]
        return {
            "obs": self.obs.copy(),
            "between_episodes": not in_flight,
            "in_flight": in_flight,
            "seeded": self.seeded,
            "recent": recent,
            "window": int(self.recent.maxlen or 0),
            "env_rngs": rngs,
            "generator": self.acting.generator.get_state().numpy(),
        }

    def in_flight(self) -> np.ndarray:
        """Indices of the envs in the middle of an episode."""
        return np.flatnonzero(~self.needs_reset) if self.seeded else np.zeros(0, np.int64)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the RNGs and the episode window; every env starts a new episode at the next
        step and the episodes in flight in `state` are cut in the store, which must hold its
        restored rows already (module docstring)."""
        self.seeded = bool(state["seeded"])
        for env, rng in zip(self.envs, state["env_rngs"], strict=True):
            saved = json.loads(rng)
            generator = np.random.Generator(getattr(np.random, saved["bit_generator"])())
            generator.bit_generator.state = saved
            env.unwrapped.np_random = generator
        recent = np.asarray(state["recent"]).reshape(-1, 2)
        self.recent = deque(
            ((float(r), int(n)) for r, n in recent), maxlen=int(state["window"]) or None
        )
        self.acting.generator.set_state(torch.from_numpy(np.asarray(state["generator"])))
        self.needs_reset[:] = True
        self.returns[:], self.lengths[:] = 0.0, 0
        # A state written before "in_flight" was saved names only whether any env was.
        all_envs = [] if state["between_episodes"] else list(range(self.num_envs))
        self.store.cut_episodes([int(i) for i in state.get("in_flight", all_envs)])
