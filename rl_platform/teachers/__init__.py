"""Registry of scripted policies (`scripted://ENV/NAME`), listed by `rlp policies`.

Every entry builds `act(obs_batch, rng) -> actions[B]` from its URI parameters. The agents
themselves live with their env (duel: `rl_platform.envs.duel.scripted`) or in this package
(`cartpole.py`, `connect_four.py`); imports are lazy so this module stays light (the league
imports `rl_platform.teachers.connect_four`, which loads this package first).
"""

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.errors import UserError

ActFn = Callable[[Any, np.random.Generator], np.ndarray]

# Short env names used in scripted URIs -> env ids.
ENV_IDS: dict[str, str] = {
    "duel": "rlp/Duel-v0",
    "cartpole": "CartPole-v1",
    "connect_four": "pettingzoo/connect_four_v3",
}


@dataclass(frozen=True)
class ScriptedEntry:
    env: str
    name: str
    description: str
    factory: str
    """`module:attribute` of a function `(params) -> act`."""

    @property
    def env_id(self) -> str:
        return ENV_IDS[self.env]

    @property
    def uri(self) -> str:
        return f"scripted://{self.env}/{self.name}"

    def build(self, params: Mapping[str, str]) -> ActFn:
        module_name, _, attribute = self.factory.partition(":")
        factory = getattr(importlib.import_module(module_name), attribute)
        return factory(self.name, dict(params))


def _no_params(kind: str, name: str, params: Mapping[str, str]) -> None:
    if params:
        raise UserError(f"{kind}/{name} takes no parameters, got {sorted(params)}")


def duel_agent(name: str, params: Mapping[str, str]) -> ActFn:
    from rl_platform.envs.duel import get_scripted_agent

    _no_params("duel", name, params)
    return get_scripted_agent(name).act


def connect_four_agent(name: str, params: Mapping[str, str]) -> ActFn:
    from rl_platform.teachers.connect_four import get_connect_four_agent

    _no_params("connect_four", name, params)
    return get_connect_four_agent(name)


def cartpole_agent(name: str, params: Mapping[str, str]) -> ActFn:
    from rl_platform.teachers.cartpole import make_balance

    return make_balance(params)


_DUEL = "rl_platform.teachers:duel_agent"
_C4 = "rl_platform.teachers:connect_four_agent"
SCRIPTED_POLICIES: dict[tuple[str, str], ScriptedEntry] = {
    (entry.env, entry.name): entry
    for entry in (
        ScriptedEntry(
            "duel", "based", "rule-based fighter: approach, attack, block, grab, recover", _DUEL
        ),
        ScriptedEntry("duel", "random", "uniformly random action every frame", _DUEL),
        ScriptedEntry("duel", "constant", "always IDLE (a punching bag)", _DUEL),
        ScriptedEntry(
            "cartpole",
            "balance",
            "pushes towards the falling pole (angle + damped angular velocity); "
            "params angular_gain, position_gain",
            "rl_platform.teachers:cartpole_agent",
        ),
        ScriptedEntry(
            "connect_four", "one_ply", "wins now, else blocks, else the most central column", _C4
        ),
        ScriptedEntry("connect_four", "random", "a uniformly random legal column", _C4),
    )
}


def scripted_policies() -> list[ScriptedEntry]:
    return list(SCRIPTED_POLICIES.values())


def get_scripted(env: str, name: str) -> ScriptedEntry:
    """The registry entry for `scripted://env/name`; UserError with close matches otherwise."""
    if env not in ENV_IDS:
        close = difflib.get_close_matches(env, ENV_IDS, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UserError(
            f"no scripted policies for env {env!r}.{hint} Envs: {', '.join(sorted(ENV_IDS))}"
        )
    entry = SCRIPTED_POLICIES.get((env, name))
    if entry is None:
        names = sorted(n for e, n in SCRIPTED_POLICIES if e == env)
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise UserError(
            f"unknown scripted policy {env}/{name}.{hint} Known for {env}: {', '.join(names)}"
        )
    return entry


def env_short_name(env_id: str) -> str | None:
    """`rlp/Duel-v0` -> `duel`; None for envs without scripted policies."""
    return next((short for short, full in ENV_IDS.items() if full == env_id), None)
