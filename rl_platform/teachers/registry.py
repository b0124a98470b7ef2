"""The one registry of scripted policies: `scripted://ENV/NAME` -> an `act(obs, rng)` maker.

Used everywhere a scripted agent is named: policy URIs (`rlp eval`, BC teachers, `rlp
policies`), league members and their `ScriptedRLModule`, tournaments. Each entry names its
agent as `module:attribute`, imported on first use so that listing stays light (the duel's
agents pull in its whole package), and the observation adapter that turns what an env or an
RLModule hands the agent into what it reads (observations.py).

The agents live with their env (duel: `rl_platform.envs.duel.scripted`) or in this package
(`cartpole.py`, `connect_four.py`).
"""

import difflib
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.base.observation_keys import ACTION_MASK_KEY
from rl_platform.teachers.observations import duel_raw_obs
from rl_platform.utils.user_code import UserCodeError, is_entry_point, load_entry_point

ActFn = Callable[[Any, np.random.Generator], np.ndarray]

# Short env names used in scripted URIs -> env ids.
ENV_IDS: dict[str, str] = {
    "duel": "rlp/Duel-v0",
    "cartpole": "CartPole-v1",
    "connect_four": "pettingzoo/connect_four_v3",
}
DUEL_ENV = ENV_IDS["duel"]


@dataclass(frozen=True)
class ScriptedEntry:
    env: str
    name: str
    description: str
    agent: str
    """`module:attribute` of `act(obs, rng) -> actions[B]` (or, with `params`, of
    `make(params) -> act`, which checks its own URI parameters)."""
    reads: Callable[[Any], Any] | None = None
    """Observation adapter applied before `act`; None: the agent reads the env's observation."""
    params: bool = False
    """Whether the agent takes URI parameters (`scripted://cartpole/balance?angular_gain=0.7`)."""

    @property
    def env_id(self) -> str:
        return ENV_IDS[self.env]

    @property
    def uri(self) -> str:
        return f"scripted://{self.env}/{self.name}"

    def build(self, params: Mapping[str, str]) -> ActFn:
        """The agent, parameterised by the URI's `params`, reading through its adapter."""
        if params and not self.params:
            raise UserError(f"{self.env}/{self.name} takes no parameters, got {sorted(params)}")
        module_name, _, attribute = self.agent.partition(":")
        target = getattr(importlib.import_module(module_name), attribute)
        act = target(dict(params)) if self.params else target
        reads = self.reads
        if reads is None:
            return act
        return lambda obs, rng: act(reads(obs), rng)


_DUEL = "rl_platform.envs.duel.scripted"
_C4 = "rl_platform.teachers.connect_four"
SCRIPTED_POLICIES: dict[tuple[str, str], ScriptedEntry] = {
    (entry.env, entry.name): entry
    for entry in (
        ScriptedEntry(
            "duel",
            "based",
            "rule-based fighter: approach, attack, block, grab, recover",
            f"{_DUEL}:act_based",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "random",
            "uniformly random action every frame",
            f"{_DUEL}:act_random",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "constant",
            "always IDLE (a punching bag)",
            f"{_DUEL}:act_constant",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "rusher",
            "style: dashes in and spams lights, never blocks; loses to blocking",
            f"{_DUEL}:act_rusher",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "blocker",
            "style: waits and blocks, punishes recovery; loses to grabs and spaced pokes",
            f"{_DUEL}:act_blocker",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "zoner",
            "style: pokes with heavies from max range, backs off; loses to approaching",
            f"{_DUEL}:act_zoner",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "counter",
            "style: waits and counters every attack but a hidden per-game one; read its history",
            "rl_platform.envs.duel.counter:act_counter",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "shifter",
            "style: plays rusher, blocker or zoner, one per game, hidden; read how it moves",
            "rl_platform.envs.duel.shifter:act_shifter",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "duel",
            "answerer",
            "answers the open styles from the frame: blocks and punishes, grabs blockers, "
            "closes in on zoners (the encoder benchmark's kickstart teacher)",
            "rl_platform.envs.duel.answerer:act_answerer",
            reads=duel_raw_obs,
        ),
        ScriptedEntry(
            "cartpole",
            "balance",
            "pushes towards the falling pole (angle + damped angular velocity); "
            "params angular_gain, position_gain",
            "rl_platform.teachers.cartpole:make_balance",
            params=True,
        ),
        # The connect-four agents read both dict layouts themselves (connect_four.split_obs).
        ScriptedEntry(
            "connect_four",
            "one_ply",
            "wins now, else blocks, else the most central column",
            f"{_C4}:act_one_ply",
        ),
        ScriptedEntry(
            "connect_four", "random", "a uniformly random legal column", f"{_C4}:act_random"
        ),
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


RANDOM_AGENT = "random"
"""A uniformly random (legal) action: every env has it, from its action space."""


def random_act(action_space: gym.Space) -> ActFn:
    """Uniform over `action_space`, legal actions only when observations carry a mask."""

    def act(obs: Any, rng: np.random.Generator) -> np.ndarray:
        if isinstance(obs, Mapping) and ACTION_MASK_KEY in obs:
            legal = np.asarray(obs[ACTION_MASK_KEY]) > 0.5
            legal = legal.reshape(-1, legal.shape[-1])
            # Legal actions score in [1, 2), illegal ones in [0, 1): argmax picks a legal one.
            return (rng.random(legal.shape) + legal).argmax(axis=1).astype(np.int64)
        first = next(iter(obs.values())) if isinstance(obs, Mapping) else obs
        return np.stack([action_space.sample() for _ in range(len(np.asarray(first)))])

    return act


def scripted_act(*, env_id: str, agent: str, action_space: gym.Space | None = None) -> ActFn:
    """The scripted agent `agent` for env `env_id` without parameters (league members,
    modules): a registry name, `random` (any env, given its `action_space`), or a user's
    `package.module:act_fn` with the registry's signature `act(obs, rng) -> actions[B]`."""
    if is_entry_point(agent):
        act = load_entry_point(agent, label=f"scripted agent {agent!r}")
        if not callable(act):
            raise UserCodeError(
                f"scripted agent {agent!r} is a {type(act).__name__}, not a function"
            )
        return act
    short = env_short_name(env_id)
    known = short is not None and (short, agent) in SCRIPTED_POLICIES
    if agent == RANDOM_AGENT and not known and action_space is not None:
        return random_act(action_space)
    if short is None:
        raise UserError(
            f"scripted agent {agent!r}: rl_platform's agents play {sorted(ENV_IDS.values())}, "
            f"not {env_id!r}; name your own as package.module:act_fn"
        )
    return get_scripted(short, agent).build({})


def check_scripted_names(*, env_id: str, names: list[str]) -> None:
    """Fail at config time (not inside an env runner) on unknown scripted agents."""
    for name in names:
        if name != RANDOM_AGENT:
            scripted_act(env_id=env_id, agent=name)
