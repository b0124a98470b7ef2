"""What an `env.id` names, resolved once per process and without Ray.

An id is, checked in this order:

1. one of rl_platform's own envs (`catalog.PLATFORM_ENVS`: `rlp/Duel-v0`, ...);
2. a registered Gymnasium id (`CartPole-v1`, `ALE/Pong-v5`), including ids a module registers
   when imported, in Gymnasium's own `module:EnvName-v0` form;
3. an entry point `package.module:ClassOrFactory`: a `gymnasium.Env`, an RLlib
   `MultiAgentEnv`, a PettingZoo AEC or Parallel env, or a `VectorGame` class (its first
   constructor parameter is `num_games`, rl_platform/envs/vector_game.py);
4. a PettingZoo env by module path (`pettingzoo.classic.tictactoe_v3`, or a module of yours
   with PettingZoo's `env()` / `parallel_env()` functions).

Importing an entry point's module runs the user's code: that is the point of naming it in a
spec the user wrote. Errors name `env.id`, keep to one line and, for an exception raised inside
the user's module, point at the user's own frames rather than ours (utils/user_code.py).
"""

import difflib
import functools
import inspect
import re
from dataclasses import dataclass
from typing import Any, Literal

from rl_platform.envs.catalog import PLATFORM_ENVS, gymnasium_ids
from rl_platform.utils.user_code import UserCodeError, import_user_module, is_entry_point

Origin = Literal["platform", "gymnasium", "entry_point", "pettingzoo"]
Calling = Literal["factory", "env_config", "kwargs", "vector_game", "pettingzoo"]
"""How make_env calls the target: a catalog factory with the env_config, an RLlib
MultiAgentEnv class with the env_config, anything else with `**kwargs`, a VectorGame as
`(num_games, **kwargs)`, a PettingZoo module through the adapter."""

_GYMNASIUM_FORM = re.compile(r"^[A-Za-z_][\w.]*:[\w/.-]+-v\d+$")
_MODULE_PATH = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$")
VECTOR_GAME_FIRST_PARAMETER = "num_games"


class EnvIdError(UserCodeError):
    """`env.id` names nothing that can be built; the message is one line with a hint."""


@dataclass(frozen=True)
class EnvSource:
    """What an env id resolved to (see the module docstring)."""

    env_id: str
    origin: Origin
    target: str
    """`module:attribute` (platform factory, entry point), a Gymnasium id or a module path."""
    calling: Calling
    kind: Literal["single", "multi"] | None
    """None: a factory function, whose product tells (`user_envs.probe_env_kind` builds one to
    see)."""

    @property
    def user_code(self) -> bool:
        """True for entry points and PettingZoo modules: probed at validation."""
        return self.origin in ("entry_point", "pettingzoo")


def _mro_names(cls: type) -> set[str]:
    return {f"{base.__module__}.{base.__qualname__}" for base in cls.__mro__}


def is_rllib_multi_agent_class(cls: type) -> bool:
    """An RLlib MultiAgentEnv subclass, told without importing Ray."""
    return any(
        name.startswith("ray.rllib.") and name.endswith(".MultiAgentEnv")
        for name in _mro_names(cls)
    )


def _first_parameter(target: Any) -> str | None:
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return None
    return parameters[0].name if parameters else None


def _is_env_class(cls: type) -> bool:
    """A class rl_platform builds as an env: gymnasium.Env, RLlib MultiAgentEnv, PettingZoo."""
    import gymnasium
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    return is_rllib_multi_agent_class(cls) or issubclass(cls, gymnasium.Env | AECEnv | ParallelEnv)


def _declared_return(target: Any) -> Any:
    """A function's return annotation, resolved; None when it has none or it cannot resolve."""
    try:
        return inspect.get_annotations(target, eval_str=True).get("return")
    except Exception:  # an annotation naming something undefined is no declaration
        return None


def _check_factory(target: Any) -> None:
    """Refuse, before calling it, anything that is not a factory declared to build an env.

    Naming a callable must not run it: `os:system` or `subprocess:run` with kwargs would run a
    command at validation. A factory is a Python function whose return annotation is an env
    class, so its own signature says what calling it does (docs/envs.md)."""
    if not inspect.isfunction(target):
        raise EnvIdError(
            f"it is a {type(target).__name__}, not an env class or an env factory; name a "
            "gymnasium.Env / MultiAgentEnv / PettingZoo / VectorGame class, or a function "
            "annotated to return one"
        )
    declared = _declared_return(target)
    if not (inspect.isclass(declared) and _is_env_class(declared)):
        shown = getattr(declared, "__name__", None) or "nothing"
        raise EnvIdError(
            f"factory {target.__name__}() is declared to return {shown}; rl_platform calls "
            "only factories annotated to return an env class (def make(...) -> gymnasium.Env)"
        )


def _classify_entry_point(env_id: str, target: Any) -> EnvSource:
    if inspect.isclass(target):
        if _first_parameter(target) == VECTOR_GAME_FIRST_PARAMETER:
            return EnvSource(env_id, "entry_point", env_id, "vector_game", "multi")
        if is_rllib_multi_agent_class(target):
            return EnvSource(env_id, "entry_point", env_id, "env_config", "multi")
        if _is_env_class(target):
            import gymnasium

            kind = "single" if issubclass(target, gymnasium.Env) else "multi"
            return EnvSource(env_id, "entry_point", env_id, "kwargs", kind)
        raise EnvIdError(
            f"class {target.__name__} is not an env: expected a gymnasium.Env, an RLlib "
            "MultiAgentEnv, a PettingZoo AEC or Parallel env, or a VectorGame class (its "
            "first constructor parameter is num_games)"
        )
    _check_factory(target)
    return EnvSource(env_id, "entry_point", env_id, "kwargs", None)


def _entry_point(env_id: str) -> EnvSource:
    module_name, _, attribute = env_id.partition(":")
    module = import_user_module(module_name, label="", error=EnvIdError)
    if attribute in gymnasium_ids():
        # Gymnasium's `module:EnvName-v0`: importing the module registered the id.
        return EnvSource(env_id, "gymnasium", env_id, "kwargs", "single")
    if _GYMNASIUM_FORM.match(env_id) and not is_entry_point(env_id):
        raise EnvIdError(f"importing {module_name} did not register the Gymnasium id {attribute!r}")
    target = getattr(module, attribute, None)
    if target is None:
        public = [name for name in dir(module) if not name.startswith("_")]
        close = difflib.get_close_matches(attribute, public, n=1)
        hint = f"did you mean {module_name}:{close[0]}?" if close else "check the name"
        raise EnvIdError(f"module {module_name} has no {attribute!r}; {hint}")
    return _classify_entry_point(env_id, target)


def _pettingzoo_module(env_id: str) -> EnvSource:
    module = import_user_module(env_id, label="", error=EnvIdError)
    if not any(callable(getattr(module, f, None)) for f in ("parallel_env", "env")):
        raise EnvIdError(
            "the module has neither parallel_env() nor env() (PettingZoo's "
            "convention); for a class or factory write module:Name"
        )
    return EnvSource(env_id, "pettingzoo", env_id, "pettingzoo", "multi")


def _unknown(env_id: str) -> EnvIdError:
    close = difflib.get_close_matches(env_id, sorted(known_ids()), n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else "give a Gymnasium id, package.module:ClassOrFactory, or a PettingZoo module "
        "path (`rlp envs` lists ours)"
    )
    return EnvIdError(f"unknown env id; {hint}")


@functools.cache
def resolve_env_source(env_id: str) -> EnvSource:
    """The `EnvSource` of `env_id` (cached: user modules are imported once per process)."""
    entry = PLATFORM_ENVS.get(env_id)
    if entry is not None:
        return EnvSource(env_id, "platform", entry.factory, "factory", entry.kind)
    if env_id in gymnasium_ids():
        return EnvSource(env_id, "gymnasium", env_id, "kwargs", "single")
    if is_entry_point(env_id) or _GYMNASIUM_FORM.match(env_id):
        return _entry_point(env_id)
    if _MODULE_PATH.match(env_id):
        return _pettingzoo_module(env_id)
    raise _unknown(env_id)


def known_ids() -> frozenset[str]:
    return frozenset(PLATFORM_ENVS) | gymnasium_ids()
