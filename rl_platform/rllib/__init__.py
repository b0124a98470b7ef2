"""The RLlib side of a run: the config builder (`config.py`), the algorithm table, the
RLModule spec, the run's facts, config callbacks, the league callback, algorithm state.
"""
