"""Adding a callback class to an RLlib config, after the ones it already has.

Its own module, below the extensions that call it (`rllib/league_callback.py`, `bc/extension.py`,
`bc/offline.py`): they change a config that `rllib/config.py` built, so they must not import
the config builder, which imports the array env runner, which reads the league's rules.
"""

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig


def with_callback(config: AlgorithmConfig, callback: type) -> AlgorithmConfig:
    """`config` with `callback` added after the callbacks it already has."""
    existing = config.callbacks_class
    existing = existing if isinstance(existing, list) else [existing]
    return config.callbacks([*existing, callback])
