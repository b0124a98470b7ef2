"""Keys that env runners (the stock multi-agent runner's callback and the array runner) log
for the driver, which turns them into `train/...`, `league/...` and `actions/...` metrics
(`rl_platform.run.metrics`). Plain strings, so every side stays free of Ray imports.
"""

LEARNER_RETURN_MEAN = "learner_episode_return_mean"
"""The trained module's own episode return, one sample per seat it played (multi-agent runs);
becomes `train/episode_return_mean`. RLlib's `episode_return_mean` sums every agent's return,
which in a zero-sum league is about 0 whoever wins."""

ACTION_COUNTS = "action_counts"
"""`action_counts/<index>`: how often the trained module took each discrete action in the
iteration (summed); becomes `actions/<name>_frac`, which sums to 1."""

MODULE_RETURN_MEAN = "module_episode_returns_mean"
"""RLlib's per-module returns (ray/rllib/utils/metrics/__init__.py); the modules other than the
trained one become `league/return_mean/<module>`."""
