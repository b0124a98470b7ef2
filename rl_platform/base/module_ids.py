"""Module ids every layer agrees on (RLlib module ids, league member ids, BC's `bc.module`),
and the one rule that finds the trained module among a checkpoint's."""

from collections.abc import Iterable

MAIN_MODULE_ID = "main"
"""The learning module of every multi-agent run, and the league's trained member."""

SINGLE_AGENT_MODULE_ID = "default_policy"
"""RLlib's `DEFAULT_MODULE_ID`, the one module of a single-agent run (kept here as a string so
pure code need not import Ray for it)."""

TRAINED_MODULE_IDS = (SINGLE_AGENT_MODULE_ID, MAIN_MODULE_ID)
"""Where a run's trained policy lives, single-agent first: metrics and exports read this."""


def trained_module_in(module_ids: Iterable[str], *, fallback_to_first: bool = False) -> str | None:
    """Which of these modules (a checkpoint's, a learner group's, an env runner's) holds the
    run's trained policy: the first of `TRAINED_MODULE_IDS` among them. None when none is,
    or, with `fallback_to_first`, the first module (a run built outside rl_platform)."""
    ids = list(module_ids)
    found = next((m for m in TRAINED_MODULE_IDS if m in ids), None)
    if found is None and fallback_to_first and ids:
        return ids[0]
    return found


def trained_module_ids(*, multi_agent: bool) -> tuple[str, ...]:
    """The module a run built from a spec trains (a league's exploiters come on top): `main`
    in multi-agent envs, RLlib's default module otherwise."""
    return (MAIN_MODULE_ID,) if multi_agent else (SINGLE_AGENT_MODULE_ID,)
