"""Behaviour cloning's pure rules, shared by every layer that takes part in BC (no Ray).

Which envs act with the teacher and how a step may be used (`slicing.py`), the BC settings at
a given env step (`schedule.py`), the replayed teacher labels (`label_replay.py`) and the shape
of a teacher-labelling connector (`labeler.py`). The losses, connectors, learner and array env
runner read them; the RLlib wiring that drives them is `rl_platform.bc`.
"""
