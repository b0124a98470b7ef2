"""When to freeze a copy of a learner into the pool.

Two triggers, either or both enabled:

* every `snapshot_every` iterations or `snapshot_every_env_steps` env steps since the
  learner's last snapshot (or since the start), and
* when the learner's win rate over its last `window_size` games against its current opponent
  mix reaches `snapshot_win_rate`. The threshold is only checked on a full window, so a lucky
  start does not freeze a weak copy; the caller clears the window after each snapshot so the
  same games do not trigger again.
"""


def should_snapshot(
    *,
    iteration: int,
    last_snapshot_iteration: int | None,
    snapshot_every: int | None,
    win_rate: float | None,
    games_in_window: int,
    window_size: int,
    snapshot_win_rate: float | None,
    env_steps_since: int = 0,
    snapshot_every_env_steps: int | None = None,
) -> bool:
    """True if a learner should be frozen now (pure; iterations count from 1)."""
    since = iteration - (last_snapshot_iteration or 0)
    if snapshot_every is not None and since >= snapshot_every:
        return True
    if snapshot_every_env_steps is not None and env_steps_since >= snapshot_every_env_steps:
        return True
    return (
        snapshot_win_rate is not None
        and win_rate is not None
        and games_in_window >= window_size
        and win_rate >= snapshot_win_rate
    )
