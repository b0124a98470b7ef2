"""Duel: a fast 1v1 platform fighter with a vectorized numpy core (see docs/duel.md).

Importing this package never imports Ray; the RLlib adapter lives in
`rl_platform.env_adapters.duel_env` (env id `rlp/Duel-v0`).
"""

from rl_platform.envs.duel.actions import NUM_ACTIONS, Action
from rl_platform.envs.duel.config import DEFAULT_REWARD_WEIGHTS, REWARD_COMPONENTS, DuelConfig
from rl_platform.envs.duel.core import DuelCore, DuelStep
from rl_platform.envs.duel.observation import OBS_SIZE, OPPONENT_SLICE, SELF_SLICE, Obs
from rl_platform.envs.duel.pettingzoo_env import DuelParallelEnv
from rl_platform.envs.duel.rules import Mode

__all__ = [
    "DEFAULT_REWARD_WEIGHTS",
    "NUM_ACTIONS",
    "OBS_SIZE",
    "OPPONENT_SLICE",
    "REWARD_COMPONENTS",
    "SELF_SLICE",
    "Action",
    "DuelConfig",
    "DuelCore",
    "DuelParallelEnv",
    "DuelStep",
    "Mode",
    "Obs",
]
