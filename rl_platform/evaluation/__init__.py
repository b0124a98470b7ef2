"""Evaluation, watching and plots: `rlp eval | run | watch | plot | doctor | policies`.

Command functions live in `cli.py`; each command's logic in its own module (eval, multi,
watch, plot, doctor), sharing `envs.py` (env resolution) and `rollout.py` (the episode loop).
"""
