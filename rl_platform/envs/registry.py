"""Build spec envs and register them with Ray under one name each (with `pettingzoo_adapter.py`
and `vector_game_env.py`, the envs files that import Ray; `catalog.py`, `sources.py`,
`user_envs.py` and the game cores do not)."""

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import gymnasium as gym
from ray.tune.registry import register_env

from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.envs.pettingzoo_adapter import wrap_pettingzoo
from rl_platform.envs.sources import resolve_env_source
from rl_platform.envs.user_env_checks import CheckedEnv
from rl_platform.envs.user_envs import build_product, product_kind
from rl_platform.envs.vector_game_env import VectorGameEnv
from rl_platform.seed_tree import seed_for_copy


class EnvSpecLike(Protocol):
    """What this module reads of a spec's `env:` block (`rl_platform.spec.sections.EnvSpec`).

    A protocol rather than the schema class: the schema validates env ids against `envs/`, so
    `envs/` sits below `spec/` and must not import it.
    """

    @property
    def id(self) -> str: ...

    @property
    def wrappers(self) -> Sequence[str]: ...

    @property
    def kwargs(self) -> Mapping[str, Any]: ...


ATARI_DIM = 64
ATARI_FRAMESTACK = 4


def load_factory(path: str) -> Any:
    """Import `module:attribute` from our own catalog (never from user strings)."""
    module_name, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def make_env(env_id: str, wrappers: list[str], kwargs: dict[str, Any]) -> Any:
    """Build one env instance for `env_id` with the spec's wrappers (runs in env runners).

    `kwargs` may be RLlib's EnvContext: pass it through unchanged, its worker_index and
    vector_index give each vectorized copy its own seed (a plain dict copy would drop them).
    """
    source = resolve_env_source(env_id)
    if source.origin == "platform":
        env = load_factory(PLATFORM_ENVS[env_id].factory)(kwargs)
    elif source.origin == "gymnasium":
        if env_id.startswith("ALE/"):
            import ale_py

            gym.register_envs(ale_py)
        env = gym.make(env_id, **kwargs)
    else:
        env = user_env(env_id, kwargs)
    return apply_wrappers(env, wrappers)


def user_env(env_id: str, env_config: Any) -> Any:
    """A user's entry point or PettingZoo env, wrapped once for RLlib where it needs it."""
    product = build_product(resolve_env_source(env_id), env_config)
    kind = product_kind(product)
    seed = seed_for_copy(env_config)
    if kind == "pettingzoo":
        return wrap_pettingzoo(product, seed=seed)
    if kind == "vector_game":
        return VectorGameEnv(product, seed=seed)
    if kind == "single":
        return CheckedEnv(product, env_id)
    return product


def apply_wrappers(env: Any, wrappers: list[str]) -> Any:
    for name in wrappers:
        if name == "atari":
            from ray.rllib.env.wrappers.atari_wrappers import wrap_atari_for_new_api_stack

            env = wrap_atari_for_new_api_stack(env, dim=ATARI_DIM, framestack=ATARI_FRAMESTACK)
        elif name == "normalize_obs":
            env = gym.wrappers.NormalizeObservation(env)
        elif name == "flatten_obs":
            env = gym.wrappers.FlattenObservation(env)
    return env


def _agent_spaces(env: EnvSpecLike, kind: str) -> list[gym.Space]:
    """`kind` ("observation" or "action") space of each agent (one entry for a single-agent
    env), read from one throwaway instance with the spec's wrappers: the spaces are only known
    once an env is built."""
    instance = make_env(env.id, list(env.wrappers), dict(env.kwargs))
    try:
        per_agent = getattr(instance, f"{kind}_spaces", None)
        if isinstance(per_agent, dict) and per_agent:
            return list(per_agent.values())
        return [getattr(instance, f"{kind}_space")]
    finally:
        instance.close()


def agent_observation_spaces(env: EnvSpecLike) -> list[gym.Space]:
    """Per-agent observation spaces: the spec adapter picks a model for RLlib's
    action-masking Dicts from them."""
    return _agent_spaces(env, "observation")


def trained_action_space(env: EnvSpecLike) -> gym.Space:
    """The action space of the trained module's seat (the first agent; in the two-player
    games every seat has the same space)."""
    return _agent_spaces(env, "action")[0]


def registered_env_name(env: EnvSpecLike) -> str:
    """Register a creator for this env spec with Ray and return its name."""
    name = f"rlp::{env.id}::{'+'.join(env.wrappers) or 'raw'}"
    env_id, wrappers = env.id, list(env.wrappers)

    def creator(env_config: dict[str, Any]) -> Any:
        return make_env(env_id, wrappers, env_config)

    register_env(name, creator)
    return name
