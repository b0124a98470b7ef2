"""Module ids every layer agrees on (RLlib module ids, league member ids, BC's `bc.module`)."""

MAIN_MODULE_ID = "main"
"""The learning module of every multi-agent run, and the league's trained member."""
