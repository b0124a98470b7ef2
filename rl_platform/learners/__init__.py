"""RLlib Learner subclasses: call `super()` and add terms from `rl_platform.losses`."""

HEALTH_NONFINITE_KEY = "health/nonfinite_update"
"""Logged as 1.0 by a learner that refused to step on NaN/Inf gradients or loss."""
