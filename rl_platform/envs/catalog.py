"""Every env id a spec may name, without importing Ray (validation must stay fast and Ray-free).

rl_platform's own ids map to "module:attribute" factories; anything else must be a Gymnasium id
(ALE ids appear once `ale_py` is imported, which registers them).
"""

import difflib
import functools
import importlib
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class PlatformEnv:
    """An env that rl_platform provides itself."""

    factory: str
    """`module:attribute` of a class/function taking an env_config dict."""
    kind: Literal["single", "multi"]
    """`multi` envs are RLlib MultiAgentEnvs."""
    description: str
    vector_game: str | None = None
    """`module:attribute` of its `VectorGame` (rl_platform/envs/vector_game.py), which the
    array env runner steps (`env.runner: auto | vector`); None for envs without one."""
    kwargs: tuple[str, ...] | None = None
    """The `env.kwargs` keys the factory reads; None: not declared (anything passes)."""
    action_names: str | None = None
    """`module:attribute` of the discrete actions' names in index order (metrics say
    `actions/jump_frac`, not `actions/3_frac`); None: actions are named by index."""


PLATFORM_ENVS: dict[str, PlatformEnv] = {
    "rlp/Duel-v0": PlatformEnv(
        "rl_platform.envs.duel.rllib_env:DuelMultiAgentEnv",
        "multi",
        "our 1v1 platform fighter",
        vector_game="rl_platform.envs.duel.vector_game:DuelVectorGame",
        action_names="rl_platform.envs.duel.actions:ACTION_NAMES",
        # DuelConfig's fields (rl_platform/envs/duel/config.py) and the adapter's render_mode.
        kwargs=(
            "max_steps",
            "stocks",
            "reward_weights",
            "seed",
            "spawn_jitter",
            "draw_is_loss",
            "truncate_on_timeout",
            "render_mode",
        ),
    ),
    "rlp/StatelessCartPole-v0": PlatformEnv(
        "ray.rllib.examples.envs.classes.stateless_cartpole:StatelessCartPole",
        "single",
        "CartPole without velocities (needs memory)",
    ),
    "rlp/RPSHistory-v0": PlatformEnv(
        "rl_platform.envs.rps_history:RPSHistoryEnv",
        "single",
        "repeated rock-paper-scissors vs a hidden-strategy opponent",
        kwargs=("opponent", "episode_len", "bias", "reveal_history"),
    ),
    "pettingzoo/connect_four_v3": PlatformEnv(
        "rl_platform.envs.pettingzoo_adapter:connect_four_env",
        "multi",
        "PettingZoo connect four (turn-based, action masks)",
        vector_game="rl_platform.envs.connect_four.vector_game:ConnectFourVectorGame",
        kwargs=("seed", "render_mode"),
    ),
}


@functools.cache
def gymnasium_ids() -> frozenset[str]:
    import gymnasium

    try:
        import ale_py

        gymnasium.register_envs(ale_py)
    except ImportError:  # ALE is a declared dependency; tolerate a partial install
        pass
    return frozenset(gymnasium.registry.keys())


def known_env_ids() -> frozenset[str]:
    return frozenset(PLATFORM_ENVS) | gymnasium_ids()


def is_known_env(env_id: str) -> bool:
    return env_id in PLATFORM_ENVS or env_id in gymnasium_ids()


def close_env_ids(env_id: str, limit: int = 3) -> list[str]:
    return difflib.get_close_matches(env_id, sorted(known_env_ids()), n=limit, cutoff=0.6)


def is_multi_agent(env_id: str) -> bool:
    entry = PLATFORM_ENVS.get(env_id)
    return entry is not None and entry.kind == "multi"


def vector_game_of(env_id: str) -> str | None:
    """The `VectorGame` factory of an env id, or None if it has none."""
    entry = PLATFORM_ENVS.get(env_id)
    return entry.vector_game if entry is not None else None


def action_names_of(env_id: str) -> tuple[str, ...]:
    """The names of an env's discrete actions in index order; () when it declares none."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is None or entry.action_names is None:
        return ()
    module_name, _, attribute = entry.action_names.partition(":")
    return tuple(getattr(importlib.import_module(module_name), attribute))
