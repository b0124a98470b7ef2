"""Behaviour cloning: BC + PPO with env slices led by a teacher, curriculum phases, offline BC.

See docs/bc.md. Importing this package does not import Ray: the spec (`spec.py`), schedule
(`schedule.py`) and slicing (`slicing.py`) are pure; the connectors, callbacks and learners
load Ray when imported themselves.
"""
