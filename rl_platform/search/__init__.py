"""Hyperparameter search over experiment specs with Ray Tune (`rlp search`, docs/search.md).

Kept import-free: `rl_platform.spec.experiment` imports `rl_platform.search.spec`, and the
Tune-facing modules (`tuner`, `trainable`) import Ray, which `rlp validate` must not.
"""
