"""Module ids every layer agrees on (RLlib module ids, league member ids, BC's `bc.module`)."""

MAIN_MODULE_ID = "main"
"""The learning module of every multi-agent run, and the league's trained member."""

SINGLE_AGENT_MODULE_ID = "default_policy"
"""RLlib's `DEFAULT_MODULE_ID`, the one module of a single-agent run (kept here as a string so
pure code need not import Ray for it)."""

TRAINED_MODULE_IDS = (SINGLE_AGENT_MODULE_ID, MAIN_MODULE_ID)
"""Where a run's trained policy lives, single-agent first: metrics and exports read this."""
