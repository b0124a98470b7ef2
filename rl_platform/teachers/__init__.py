"""Scripted policies usable as opponents and BC teachers, behind one registry (registry.py).

`scripted://ENV/NAME` URIs, league scripted members and tournaments all look agents up here;
`rlp policies` lists the registry.
"""

from rl_platform.teachers.registry import (
    DUEL_ENV,
    ENV_IDS,
    SCRIPTED_POLICIES,
    ActFn,
    ScriptedEntry,
    check_scripted_names,
    env_short_name,
    get_scripted,
    scripted_act,
    scripted_policies,
)

__all__ = [
    "DUEL_ENV",
    "ENV_IDS",
    "SCRIPTED_POLICIES",
    "ActFn",
    "ScriptedEntry",
    "check_scripted_names",
    "env_short_name",
    "get_scripted",
    "scripted_act",
    "scripted_policies",
]
