"""Which `env.kwargs` keys an env accepts, known before any env is built (no Ray).

Our own envs declare their keys in the catalog. A Gymnasium id's constructor says it in its
signature; `gymnasium.make` itself also takes `max_episode_steps` and `disable_env_checker`.
An env whose constructor takes `**kwargs` (or whose entry point cannot be inspected) accepts
anything: the check only refuses keys the env is known not to read.
"""

import inspect
from collections.abc import Iterable

from rl_platform.envs.catalog import PLATFORM_ENVS

GYMNASIUM_MAKE_KWARGS = frozenset({"max_episode_steps", "disable_env_checker"})


def _gymnasium_kwargs(env_id: str) -> frozenset[str] | None:
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    try:
        entry_point = gymnasium.spec(env_id).entry_point
        creator = load_env_creator(entry_point) if isinstance(entry_point, str) else entry_point
        parameters = inspect.signature(creator).parameters.values()
    except Exception:  # an entry point we cannot inspect: do not guess
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    named = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL}
    return frozenset(named) | GYMNASIUM_MAKE_KWARGS


def accepted_env_kwargs(env_id: str) -> frozenset[str] | None:
    """The keys `env_id` reads from `env.kwargs`; None when it accepts any."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is not None:
        return frozenset(entry.kwargs) if entry.kwargs is not None else None
    return _gymnasium_kwargs(env_id)


def unknown_env_kwargs(env_id: str, keys: Iterable[str]) -> tuple[list[str], list[str]]:
    """(keys `env_id` does not read, the keys it does); ([], []) when it accepts any."""
    accepted = accepted_env_kwargs(env_id)
    if accepted is None:
        return [], []
    return sorted(set(keys) - accepted), sorted(accepted)
