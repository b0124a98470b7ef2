"""Build a user's env (entry point or PettingZoo module) and probe it once, without Ray.

`build_product` calls what `env.id` names the way its kind expects (sources.py) and returns
what came back, unwrapped: a `gymnasium.Env`, an RLlib `MultiAgentEnv`, a PettingZoo AEC or
Parallel env, or a one-game `VectorGame`. `registry.make_env` wraps it for RLlib
(pettingzoo_adapter.py, vector_game_env.py); `probe_env_kind` builds one in the driver at
validation time to learn the env's kind and check its spaces, so a wrong return type or a
space RLlib cannot handle is a one-line spec error instead of a traceback in an env runner.
"""

import functools
import json
import os
import sys
import traceback
from collections.abc import Mapping
from typing import Any, Literal

import gymnasium as gym

from rl_platform.base.errors import causes
from rl_platform.base.seed_tree import SEED_KEY
from rl_platform.envs.sources import (
    EnvIdError,
    EnvSource,
    is_rllib_multi_agent_class,
    resolve_env_source,
)
from rl_platform.envs.user_env_checks import UserEnvError, close_product, preflight
from rl_platform.envs.vector_game import VectorGame
from rl_platform.utils.user_code import import_user_module, user_frames

_UNSUPPORTED_SPACES = (gym.spaces.Text, gym.spaces.Graph, gym.spaces.Sequence, gym.spaces.OneOf)
_ACTION_SPACES = (gym.spaces.Discrete, gym.spaces.Box, gym.spaces.MultiDiscrete)
EXPECTED = (
    "a gymnasium.Env, an RLlib MultiAgentEnv, a PettingZoo AEC or Parallel env, or a "
    "VectorGame class"
)


def user_target(source: EnvSource) -> Any:
    """The class, factory or PettingZoo constructor a user source names."""
    if source.origin == "pettingzoo":
        module = import_user_module(source.target, label="", error=EnvIdError)
        return getattr(module, "parallel_env", None) or module.env
    module_name, _, attribute = source.target.partition(":")
    module = import_user_module(module_name, label="", error=EnvIdError)
    return getattr(module, attribute)


def build_product(source: EnvSource, env_config: Mapping[str, Any]) -> Any:
    """Call the user's target for one env (see the module docstring); `seed` is ours, never
    passed on, except to RLlib MultiAgentEnv classes, which take the whole env_config."""
    target = user_target(source)
    kwargs = {k: v for k, v in env_config.items() if k != SEED_KEY}
    try:
        if source.calling == "env_config":
            return target(env_config)
        if source.calling == "vector_game":
            return target(1, **kwargs)
        return target(**kwargs)
    except EnvIdError:
        raise
    except Exception as exc:
        raise EnvIdError(
            f"building the env failed: {type(exc).__name__}: {exc}{user_frames(exc)}"
        ) from None


def product_kind(product: Any) -> Literal["single", "multi", "pettingzoo", "vector_game"]:
    """What a built product is; EnvIdError for anything else."""
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    if isinstance(product, AECEnv | ParallelEnv):
        return "pettingzoo"
    if isinstance(product, VectorGame):
        return "vector_game"
    if is_rllib_multi_agent_class(type(product)):
        return "multi"
    if isinstance(product, gym.Env):
        return "single"
    raise EnvIdError(f"returned a {type(product).__name__}; expected {EXPECTED}")


def _agent_spaces(product: Any, kind: str) -> dict[str, tuple[gym.Space, gym.Space]]:
    if kind == "single":
        return {"agent": (product.observation_space, product.action_space)}
    if kind == "vector_game":
        return {
            f"seat_{p}": (product.observation_space, product.action_space)
            for p in range(product.num_seats)
        }
    agents = list(product.possible_agents)
    if kind == "pettingzoo":
        return {a: (product.observation_space(a), product.action_space(a)) for a in agents}
    return {a: (product.get_observation_space(a), product.get_action_space(a)) for a in agents}


def _unsupported(space: gym.Space) -> gym.Space | None:
    if isinstance(space, _UNSUPPORTED_SPACES):
        return space
    children = []
    if isinstance(space, gym.spaces.Dict):
        children = list(space.spaces.values())
    elif isinstance(space, gym.spaces.Tuple):
        children = list(space.spaces)
    return next((bad for c in children if (bad := _unsupported(c)) is not None), None)


def check_spaces(spaces: Mapping[str, tuple[gym.Space, gym.Space]]) -> None:
    """EnvIdError for spaces no RLlib model here can read or act in."""
    for agent, (observation, action) in spaces.items():
        bad = _unsupported(observation)
        if bad is not None:
            raise EnvIdError(
                f"agent {agent!r} observes a {type(bad).__name__} space, which RLlib's "
                "models cannot read; use Box, Discrete, MultiDiscrete, Dict or Tuple"
            )
        if not isinstance(action, _ACTION_SPACES):
            raise EnvIdError(
                f"agent {agent!r} acts in a {type(action).__name__} space; rl_platform's "
                "models act in Discrete, Box or MultiDiscrete spaces"
            )


@functools.cache
def _probe(env_id: str, kwargs_json: str) -> Literal["single", "multi"]:
    source = resolve_env_source(env_id)
    product = build_product(source, json.loads(kwargs_json))
    try:
        kind = product_kind(product)
        check_spaces(_agent_spaces(product, kind))
    finally:
        close_product(product)
    return "single" if kind == "single" else "multi"


def probe_env_kind(env_id: str, kwargs: Mapping[str, Any] | None = None) -> str:
    """Build one env of a user source with `kwargs` (once per process and arguments), check
    its spaces, and return "single" or "multi"."""
    return _probe(env_id, json.dumps(dict(kwargs or {}), sort_keys=True, default=str))


def preflight_env(env_id: str, kwargs: Mapping[str, Any], *, seed: int) -> None:
    """Reset a user's single-agent env and step it a few times in the driver, through the
    checks every env copy runs with (`user_env_checks.py`): an env that breaks the Gymnasium
    API at once is one line here, before Ray starts, not a crashed env runner later."""
    source = resolve_env_source(env_id)
    if not source.user_code or source.kind == "multi":
        return
    product = build_product(source, dict(kwargs))
    if product_kind(product) != "single":
        close_product(product)
        return
    preflight(product, env_id, seed=seed)


def _user_module_files(env_id: str) -> tuple[str, ...]:
    """The source files (or, for a package, the folder) of the module a user source names."""
    source = resolve_env_source(env_id)
    if not source.user_code:
        return ()
    module_name = source.target.partition(":")[0]
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if not path:
        return ()
    folder = os.path.dirname(path)
    return (folder + os.sep,) if os.path.basename(path) == "__init__.py" else (path,)


def env_error_in(exc: BaseException, env_id: str) -> UserEnvError | None:
    """A `UserEnvError` for an exception raised inside the user's env module, found among
    `exc`'s causes (RLlib re-raises an env's error as a bare `RuntimeError`): one line naming
    the env, the env's method and its exception with the user's frames. None when no cause
    was raised in the user's code (a bug of ours stays a bug report)."""
    files = _user_module_files(env_id)
    if not files:
        return None
    for cause in causes(exc):
        frames = [
            f for f in traceback.extract_tb(cause.__traceback__) if f.filename.startswith(files)
        ]
        if frames:
            text = f"env {env_id}: {frames[0].name}() raised {type(cause).__name__}: {cause}"
            return UserEnvError(" ".join(f"{text}{user_frames(cause)}".split())[:600])
    return None
