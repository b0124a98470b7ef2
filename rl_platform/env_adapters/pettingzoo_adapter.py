"""Any PettingZoo env, AEC or Parallel, as an RLlib MultiAgentEnv (the one adapter).

`wrap_pettingzoo(env, seed=...)` wraps an AEC env in RLlib's `PettingZooEnv` (only the agent
to move gets an observation; PettingZoo's `last()` hands each agent the reward collected since
its previous move, and every agent its final one when the game ends) and a Parallel env in
`ParallelAdapter` (every live agent acts every step). Observations are rewritten once, by the
agent's space:

* PettingZoo's masked dict `{"observation": [...], "action_mask": int8 [A]}` becomes RLlib's
  masking convention `{"observations": float32 [prod(shape)], "action_mask": float32 [A]}`
  (as in ray/rllib/examples/rl_modules/classes/action_masking_rlm.py), which every
  rl_platform model reads (`model.type: mlp` builds modules/masked_mlp_module.py for it);
* `Discrete(n)` observations become a one-hot float32 `Box(n)` (RLlib's models read Boxes);
* anything else passes through unchanged.

`seed` seeds the first reset only (later games follow PettingZoo's RNG); `registry.make_env`
passes the spec's seed offset by worker and vector index
(`rl_platform.base.seed_tree.seed_for_copy`).
"""

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo.utils.env import ParallelEnv
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from rl_platform.base.errors import UserError
from rl_platform.base.observation_keys import ACTION_MASK_KEY, MASKED_OBS_KEY
from rl_platform.base.seed_tree import seed_for_copy
from rl_platform.envs.catalog import PLATFORM_ENVS

_PETTINGZOO_MASK_KEYS = frozenset({"observation", "action_mask"})
_CONNECT_FOUR_KEYS = frozenset(PLATFORM_ENVS["pettingzoo/connect_four_v3"].kwargs or ())


def _is_masked(space: gym.Space) -> bool:
    return isinstance(space, gym.spaces.Dict) and set(space.spaces) == _PETTINGZOO_MASK_KEYS


def converted_space(space: gym.Space) -> gym.Space:
    """The space RLlib sees for a PettingZoo observation space (module docstring)."""
    if _is_masked(space):
        size = int(np.prod(space["observation"].shape))
        mask = space["action_mask"]
        return gym.spaces.Dict(
            {
                MASKED_OBS_KEY: gym.spaces.Box(0.0, 1.0, (size,), np.float32),
                ACTION_MASK_KEY: gym.spaces.Box(0.0, 1.0, mask.shape, np.float32),
            }
        )
    if isinstance(space, gym.spaces.Discrete):
        return gym.spaces.Box(0.0, 1.0, (int(space.n),), np.float32)
    return space


def convert_obs(space: gym.Space, obs: Any) -> Any:
    """One observation in PettingZoo's `space`, rewritten for `converted_space(space)`."""
    if _is_masked(space):
        return {
            MASKED_OBS_KEY: np.asarray(obs["observation"], dtype=np.float32).reshape(-1),
            ACTION_MASK_KEY: np.asarray(obs["action_mask"], dtype=np.float32),
        }
    if isinstance(space, gym.spaces.Discrete):
        one_hot = np.zeros(int(space.n), np.float32)
        one_hot[int(obs) - int(space.start)] = 1.0
        return one_hot
    return obs


class _Converting:
    """Mixin: per-agent converted spaces and observations, first-reset seeding."""

    raw_spaces: dict[Any, gym.Space]
    _seed: int | None

    def _convert_spaces(self, observation_spaces: Mapping[Any, gym.Space]) -> None:
        self.raw_spaces = dict(observation_spaces)
        self.observation_spaces = {a: converted_space(s) for a, s in self.raw_spaces.items()}
        self.observation_space = gym.spaces.Dict(self.observation_spaces)

    def _convert(self, obs: Mapping[Any, Any]) -> dict[Any, Any]:
        return {agent: convert_obs(self.raw_spaces[agent], o) for agent, o in obs.items()}

    def _first_seed(self, seed: int | None) -> int | None:
        if seed is None and self._seed is not None:
            seed, self._seed = self._seed, None  # seed only the first game; later ones follow
        return seed


class AECAdapter(_Converting, PettingZooEnv):
    """RLlib's `PettingZooEnv` for turn-based (AEC) games, observations converted."""

    def __init__(self, env: Any, *, seed: int | None = None) -> None:
        super().__init__(env)
        self._seed = seed
        self._convert_spaces(self.observation_spaces)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, infos = super().reset(seed=self._first_seed(seed), options=options)
        return self._convert(obs), infos

    def step(self, action: dict) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminateds, truncateds, infos = super().step(action)
        return self._convert(obs), rewards, terminateds, truncateds, infos


class ParallelAdapter(_Converting, MultiAgentEnv):
    """A PettingZoo Parallel env (simultaneous moves), observations converted."""

    def __init__(self, env: ParallelEnv, *, seed: int | None = None) -> None:
        super().__init__()
        self.par_env = env
        self._seed = seed
        self.possible_agents = list(env.possible_agents)
        self.agents = list(self.possible_agents)
        self.action_spaces = {a: env.action_space(a) for a in self.possible_agents}
        self.action_space = gym.spaces.Dict(self.action_spaces)
        self._convert_spaces({a: env.observation_space(a) for a in self.possible_agents})

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, infos = self.par_env.reset(seed=self._first_seed(seed), options=options)
        self.agents = list(self.par_env.agents)
        return self._convert(obs), dict(infos or {})

    def step(self, action: dict) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminateds, truncateds, infos = self.par_env.step(action)
        self.agents = list(self.par_env.agents)
        terminateds = {**terminateds, "__all__": all(terminateds.values())}
        truncateds = {**truncateds, "__all__": all(truncateds.values())}
        return self._convert(obs), dict(rewards), terminateds, truncateds, dict(infos)

    def render(self) -> Any:
        return self.par_env.render()

    def close(self) -> None:
        self.par_env.close()


def wrap_pettingzoo(env: Any, *, seed: int | None = None) -> MultiAgentEnv:
    """The RLlib view of a PettingZoo env (module docstring)."""
    if isinstance(env, ParallelEnv):
        return ParallelAdapter(env, seed=seed)
    return AECAdapter(env, seed=seed)


def connect_four_env(env_config: Mapping[str, Any] | None = None) -> MultiAgentEnv:
    """PettingZoo connect four, the factory behind `pettingzoo/connect_four_v3`.

    env_config keys: `seed` and `render_mode` (PettingZoo's: "human", "rgb_array", "ansi").
    """
    from pettingzoo.classic import connect_four_v3

    config = env_config if env_config is not None else {}
    unknown = sorted(set(config) - _CONNECT_FOUR_KEYS)
    if unknown:
        raise UserError(
            f"connect_four: unknown env kwargs {unknown}; known: {sorted(_CONNECT_FOUR_KEYS)}"
        )
    env = connect_four_v3.env(render_mode=config.get("render_mode"))
    return wrap_pettingzoo(env, seed=seed_for_copy(config))
