"""Questions every layer asks about an `env.id`, for any kind of id (no Ray).

Our own ids answer from the catalog, Gymnasium ids are single-agent; user sources (entry
points, PettingZoo modules) answer from what they are, and a factory function from one env
built in the driver (`user_envs.probe_env_kind`, once per process and kwargs).

`env_facts` is the one place that tells an env's kind: the spec's validators read it through
`EnvSpec.facts()`, a run through `rl_platform.rllib.facts.RunFacts.env`, `rlp eval` through its
`EnvTarget`.
"""

import functools
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rl_platform.envs.catalog import PLATFORM_ENVS
from rl_platform.envs.sources import resolve_env_source
from rl_platform.envs.user_envs import probe_env_kind

SINGLE_AGENT_ID = "agent"
"""The one agent of a single-agent env, where agents are named (per-agent spaces, `rlp eval`)."""


def check_env(env_id: str, kwargs: Mapping[str, Any] | None = None) -> None:
    """Raise `EnvIdError` (one line) if `env_id` cannot be built with `kwargs`: user sources
    are built once here, in the driver, so their errors come before Ray starts."""
    source = resolve_env_source(env_id)
    if source.user_code:
        probe_env_kind(env_id, kwargs)


def is_multi_agent(env_id: str, kwargs: Mapping[str, Any] | None = None) -> bool:
    """Read `env_facts(...).multi_agent` instead: this is the derivation behind it."""
    source = resolve_env_source(env_id)
    kind = source.kind if source.kind is not None else probe_env_kind(env_id, kwargs)
    return kind == "multi"


EnvKind = Literal["single", "multi_agent", "vector_game"]
"""`single`: a Gymnasium env (one agent); `multi_agent`: an RLlib MultiAgentEnv (PettingZoo
and factory products included); `vector_game`: a multi-agent env with a vectorized game core
(`VectorGame`), which the array runner can step."""


@dataclass(frozen=True)
class EnvFacts:
    """What an env id with its kwargs is, resolved once per process (`env_facts`)."""

    env_id: str
    kind: EnvKind
    vector_game: str | None
    """`module:attribute` of its `VectorGame` factory; None unless `kind` is vector_game."""
    turn_based: bool = False
    """Its vectorized game lets some seats wait while others act (the factory's `turn_based`;
    a factory that does not say counts as turn-based)."""

    @property
    def multi_agent(self) -> bool:
        return self.kind != "single"


@functools.cache
def _env_facts(env_id: str, kwargs_json: str) -> EnvFacts:
    if not is_multi_agent(env_id, json.loads(kwargs_json)):
        return EnvFacts(env_id, "single", None)
    factory = vector_game_of(env_id)
    if factory is None:
        return EnvFacts(env_id, "multi_agent", None)
    return EnvFacts(env_id, "vector_game", factory, turn_based=_turn_based(factory))


def _turn_based(factory: str) -> bool:
    module_name, _, attribute = factory.partition(":")
    try:
        target = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError):
        return True
    return bool(getattr(target, "turn_based", True))


def env_facts(env_id: str, kwargs: Mapping[str, Any] | None = None) -> EnvFacts:
    """The `EnvFacts` of `env_id` built with `kwargs` (a factory's product may depend on
    them); user envs are probed once per process and arguments."""
    return _env_facts(env_id, json.dumps(dict(kwargs or {}), sort_keys=True, default=str))


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
