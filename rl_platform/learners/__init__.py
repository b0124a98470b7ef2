"""RLlib Learner subclasses: call `super()` and add terms from `rl_platform.losses`."""

HEALTH_NONFINITE_KEY = "health/nonfinite_update"
"""Logged as 1.0 by a learner that refused to step on NaN/Inf gradients or loss."""

CAPTURE_UPDATE_KEY = "rlp_capture_update"
"""`learner_config_dict` key: the array learner captures its minibatch step as a CUDA graph
on CUDA (`resources.cuda_graphs`; learners/captured_step.py)."""

DECOUPLED_KEY = "rlp_decoupled_ppo"
"""`learner_config_dict` key: the samples come one policy version late (`resources.overlap`),
so the array learner's PPO is decoupled (rl_platform/losses/ppo.py)."""
