"""Keys that env runners (the stock multi-agent runner's callback and the array runner) log
for the driver, which turns them into `train/...`, `league/...` and `actions/...` metrics
(`rl_platform.run.metrics`), and the metrics.jsonl keys read beyond the loop that writes them.
Plain strings, so every side stays free of Ray imports.
"""

RETURN_MEAN = "train/episode_return_mean"
"""metrics.jsonl: the trained module's mean return over the last 100 episodes."""

BC_COEF = "bc/coef"
"""metrics.jsonl: the weight of the BC term in this iteration's update (`bc:`, its schedule);
0 or absent when none. The health check reads it (`rl_platform.run.health`)."""

EVAL_PREFIX = "eval/"
"""metrics.jsonl: every metric of evaluation during training (`rl_platform.run.periodic_eval`)."""

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
