"""Hyperparameter search over experiment specs with Ray Tune (`rlp search`, docs/search.md).

Kept import-free: the Tune-facing modules (`tuner`, `trainable`, and `space` inside its
functions) import Ray, which `rlp validate` must not.
"""
