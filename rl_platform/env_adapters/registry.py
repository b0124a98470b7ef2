"""Build spec envs and register them with Ray under one name each (with `pettingzoo_adapter.py`
and `vector_game_env.py`, the envs files that import Ray; `catalog.py`, `sources.py`,
`user_envs.py` and the game cores do not)."""

import importlib
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import gymnasium as gym
from ray.tune.registry import register_env

from rl_platform.base.seed_tree import seed_for_copy
from rl_platform.env_adapters.pettingzoo_adapter import wrap_pettingzoo
from rl_platform.env_adapters.vector_game_env import VectorGameEnv
from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.envs.env_info import SINGLE_AGENT_ID
from rl_platform.envs.sources import resolve_env_source
from rl_platform.envs.user_env_checks import CheckedEnv
from rl_platform.envs.user_envs import build_product, product_kind


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


def agent_spaces(
    env_id: str, wrappers: Sequence[str], kwargs: Mapping[str, Any], *, multi_agent: bool
) -> dict[str, tuple[gym.Space, gym.Space]]:
    """Each agent's (observation, action) space, read from one throwaway instance with the
    wrappers: the spaces are only known once an env is built. Agents are sorted (RLlib's
    PettingZooEnv keeps them in a set, whose order varies per process); a single-agent env's
    one agent is `SINGLE_AGENT_ID`. A run reads them through `RunFacts.agent_spaces`."""
    instance = make_env(env_id, list(wrappers), dict(kwargs))
    try:
        if not multi_agent:
            return {SINGLE_AGENT_ID: (instance.observation_space, instance.action_space)}
        return {
            agent: (instance.get_observation_space(agent), instance.get_action_space(agent))
            for agent in sorted(instance.possible_agents)
        }
    finally:
        instance.close()


def registered_env_name(env: EnvSpecLike) -> str:
    """Register a creator for this env spec with Ray and return its name."""
    name = f"rlp::{env.id}::{'+'.join(env.wrappers) or 'raw'}"
    env_id, wrappers = env.id, list(env.wrappers)

    def creator(env_config: dict[str, Any]) -> Any:
        return make_env(env_id, wrappers, env_config)

    register_env(name, creator)
    return name
