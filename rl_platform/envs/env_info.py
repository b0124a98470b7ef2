"""Questions every layer asks about an `env.id`, for any kind of id (no Ray).

Our own ids answer from the catalog, Gymnasium ids are single-agent; user sources (entry
points, PettingZoo modules) answer from what they are, and a factory function from one env
built in the driver (`user_envs.probe_env_kind`, once per process and kwargs).
"""

import importlib
from collections.abc import Mapping
from typing import Any

from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.envs.sources import resolve_env_source
from rl_platform.envs.user_envs import probe_env_kind


def check_env(env_id: str, kwargs: Mapping[str, Any] | None = None) -> None:
    """Raise `EnvIdError` (one line) if `env_id` cannot be built with `kwargs`: user sources
    are built once here, in the driver, so their errors come before Ray starts."""
    source = resolve_env_source(env_id)
    if source.user_code:
        probe_env_kind(env_id, kwargs)


def is_multi_agent(env_id: str, kwargs: Mapping[str, Any] | None = None) -> bool:
    source = resolve_env_source(env_id)
    kind = source.kind if source.kind is not None else probe_env_kind(env_id, kwargs)
    return kind == "multi"


def vector_game_of(env_id: str) -> str | None:
    """The `module:attribute` of an env id's `VectorGame` factory, or None if it has none."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is not None:
        return entry.vector_game
    source = resolve_env_source(env_id)
    return source.target if source.calling == "vector_game" else None


def action_names_of(env_id: str) -> tuple[str, ...]:
    """The names of an env's discrete actions in index order; () when it declares none."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is None or entry.action_names is None:
        return ()
    module_name, _, attribute = entry.action_names.partition(":")
    return tuple(getattr(importlib.import_module(module_name), attribute))
