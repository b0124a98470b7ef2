"""rl_platform's own envs and Gymnasium's ids, without Ray (validation must stay fast).

rl_platform's own ids map to "module:attribute" factories. Every other id (Gymnasium ids, entry
points, PettingZoo modules) is resolved by `sources.py`; `env_info.py` answers questions about
any id.
"""

import functools
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
    feature_names: str | None = None
    """`module:attribute` of a function giving the observation's named features and their
    columns, `{name: (column, ...)}`, which `env.hide` reads (envs/hidden_view.py); None:
    features are not named."""


PLATFORM_ENVS: dict[str, PlatformEnv] = {
    "rlp/Duel-v0": PlatformEnv(
        "rl_platform.env_adapters.duel_env:DuelMultiAgentEnv",
        "multi",
        "our 1v1 platform fighter",
        vector_game="rl_platform.envs.duel.vector_game:DuelVectorGame",
        action_names="rl_platform.envs.duel.actions:ACTION_NAMES",
        feature_names="rl_platform.envs.duel.observation:feature_columns",
        # DuelConfig's fields (rl_platform/envs/duel/config.py) and the adapter's render_mode.
        kwargs=(
            "max_steps",
            "stocks",
            "reward_weights",
            "seed",
            "spawn_jitter",
            "draw_is_loss",
            "truncate_on_timeout",
            "zone_closes_at",
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
        "rl_platform.env_adapters.pettingzoo_adapter:connect_four_env",
        "multi",
        "PettingZoo connect four (turn-based, action masks)",
        vector_game="rl_platform.envs.connect_four.vector_game:ConnectFourVectorGame",
        kwargs=("seed", "render_mode"),
    ),
}


@functools.cache
def _register_ale() -> None:
    import gymnasium

    try:
        import ale_py

        gymnasium.register_envs(ale_py)
    except ImportError:  # ALE is a declared dependency; tolerate a partial install
        pass


def gymnasium_ids() -> frozenset[str]:
    """Every id Gymnasium knows now (read afresh: importing a user's module may add ids)."""
    import gymnasium

    _register_ale()
    return frozenset(gymnasium.registry.keys())
