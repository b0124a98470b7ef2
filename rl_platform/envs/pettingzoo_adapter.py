"""PettingZoo turn-based (AEC) games as RLlib MultiAgentEnvs with RLlib's action-mask convention.

`connect_four_env(env_config)` is the factory behind `pettingzoo/connect_four_v3`. It wraps
PettingZoo's `connect_four_v3` in RLlib's `PettingZooEnv` (only the agent to move gets an
observation; both get their final reward when the game ends) and converts observations from
PettingZoo's `{"observation": int8 [6, 7, 2], "action_mask": int8 [7]}` to RLlib's masking
convention `{"observations": float32 [84], "action_mask": float32 [7]}` (as in
ray/rllib/examples/rl_modules/classes/action_masking_rlm.py). RLlib's default PPO module cannot
read it; every rl_platform model masks illegal actions (`model.type: mlp` builds
rl_platform/modules/masked_mlp_module.py for such envs; `lstm`, `transformer_lstm`).

env_config keys: `seed` (offset by worker and vector index so env copies differ) and
`render_mode` (PettingZoo's: "human", "rgb_array" or "ansi").
"""

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.errors import UserError

MASKED_OBS_KEY = "observations"
ACTION_MASK_KEY = "action_mask"
_SEED_STRIDE = 1000
_KNOWN_KEYS = frozenset(PLATFORM_ENVS["pettingzoo/connect_four_v3"].kwargs or ())


def masked_space(space: gym.spaces.Dict) -> gym.spaces.Dict:
    """RLlib masking-convention space for a PettingZoo `{observation, action_mask}` space."""
    board = space["observation"]
    size = int(np.prod(board.shape))
    mask = space["action_mask"]
    return gym.spaces.Dict(
        {
            MASKED_OBS_KEY: gym.spaces.Box(0.0, 1.0, (size,), np.float32),
            ACTION_MASK_KEY: gym.spaces.Box(0.0, 1.0, mask.shape, np.float32),
        }
    )


def masked_obs(obs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    return {
        MASKED_OBS_KEY: np.asarray(obs["observation"], dtype=np.float32).reshape(-1),
        ACTION_MASK_KEY: np.asarray(obs["action_mask"], dtype=np.float32),
    }


class MaskedPettingZooEnv(PettingZooEnv):
    """`PettingZooEnv` whose observations follow RLlib's `{observations, action_mask}` keys."""

    def __init__(self, env: Any, *, seed: int | None = None) -> None:
        super().__init__(env)
        self._seed = seed
        self.observation_spaces = {
            aid: masked_space(space) for aid, space in self.observation_spaces.items()
        }
        self.observation_space = gym.spaces.Dict(self.observation_spaces)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is None and self._seed is not None:
            seed, self._seed = self._seed, None  # seed only the first game; later ones follow
        obs, infos = super().reset(seed=seed, options=options)
        return {aid: masked_obs(o) for aid, o in obs.items()}, infos

    def step(self, action: dict) -> tuple[dict, dict, dict, dict, dict]:
        obs, rewards, terminateds, truncateds, infos = super().step(action)
        return (
            {aid: masked_obs(o) for aid, o in obs.items()},
            rewards,
            terminateds,
            truncateds,
            infos,
        )


def _seed_for_copy(env_config: Mapping[str, Any]) -> int | None:
    seed = env_config.get("seed")
    if seed is None:
        return None
    worker = int(getattr(env_config, "worker_index", 0) or 0)
    vector = int(getattr(env_config, "vector_index", 0) or 0)
    return int(seed) + worker * _SEED_STRIDE + vector


def connect_four_env(env_config: Mapping[str, Any] | None = None) -> MultiAgentEnv:
    """PettingZoo connect four as an RLlib MultiAgentEnv (see the module docstring)."""
    from pettingzoo.classic import connect_four_v3

    config = env_config if env_config is not None else {}
    unknown = sorted(set(config) - _KNOWN_KEYS)
    if unknown:
        raise UserError(f"connect_four: unknown env kwargs {unknown}; known: {sorted(_KNOWN_KEYS)}")
    env = connect_four_v3.env(render_mode=config.get("render_mode"))
    return MaskedPettingZooEnv(env, seed=_seed_for_copy(config))
