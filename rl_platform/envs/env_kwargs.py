"""Which `env.kwargs` keys an env accepts, known before any env is built (no Ray).

Our own envs declare their keys in the catalog. A Gymnasium id's constructor says it in its
signature; `gymnasium.make` itself also takes `max_episode_steps` and `disable_env_checker`.
A user's entry point or PettingZoo env says it in its signature too, plus `seed`, which
rl_platform reads itself (offset per env copy) for those sources.
An env whose constructor takes `**kwargs` (or whose entry point cannot be inspected) accepts
anything: the check only refuses keys the env is known not to read.
"""

import inspect
from collections.abc import Iterable
from typing import Any

from rl_platform.base.seed_tree import SEED_KEY
from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.envs.sources import EnvIdError, resolve_env_source
from rl_platform.envs.user_envs import user_target

GYMNASIUM_MAKE_KWARGS = frozenset({"max_episode_steps", "disable_env_checker"})


def _keyword_names(creator: Any, *, skip: int = 0) -> frozenset[str] | None:
    """The keyword parameters of `creator` after the first `skip`; None with `**kwargs` or
    when it cannot be inspected (do not guess)."""
    try:
        parameters = list(inspect.signature(creator).parameters.values())[skip:]
    except (TypeError, ValueError):
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return frozenset(p.name for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL)


def _gymnasium_kwargs(env_id: str) -> frozenset[str] | None:
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    try:
        entry_point = gymnasium.spec(env_id).entry_point
        creator = load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
    except Exception:  # an entry point we cannot load: do not guess
        return None
    named = _keyword_names(creator)
    return None if named is None else named | GYMNASIUM_MAKE_KWARGS


def _user_kwargs(env_id: str) -> frozenset[str] | None:
    source = resolve_env_source(env_id)
    if source.calling == "env_config":  # RLlib's convention: the whole dict, any keys
        return None
    try:
        target = user_target(source)
    except EnvIdError:
        return None  # the id's own check reports it
    named = _keyword_names(target, skip=1 if source.calling == "vector_game" else 0)
    return None if named is None else named | {SEED_KEY}


def accepted_env_kwargs(env_id: str) -> frozenset[str] | None:
    """The keys `env_id` reads from `env.kwargs`; None when it accepts any."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is not None:
        return frozenset(entry.kwargs) if entry.kwargs is not None else None
    try:
        source = resolve_env_source(env_id)
    except EnvIdError:
        return None  # the id's own check reports it
    if source.user_code:
        return _user_kwargs(env_id)
    return _gymnasium_kwargs(env_id)


def unknown_env_kwargs(env_id: str, keys: Iterable[str]) -> tuple[list[str], list[str]]:
    """(keys `env_id` does not read, the keys it does); ([], []) when it accepts any."""
    accepted = accepted_env_kwargs(env_id)
    if accepted is None:
        return [], []
    return sorted(set(keys) - accepted), sorted(accepted)
