"""should_snapshot: periodic and win-rate triggers."""

from rl_platform.league.snapshots import should_snapshot


def _call(**overrides) -> bool:
    args = {
        "iteration": 5,
        "last_snapshot_iteration": None,
        "snapshot_every": None,
        "win_rate": None,
        "games_in_window": 0,
        "window_size": 100,
        "snapshot_win_rate": None,
    }
    return should_snapshot(**{**args, **overrides})


def test_periodic_trigger_counts_from_last_snapshot() -> None:
    assert not _call(iteration=9, snapshot_every=10)
    assert _call(iteration=10, snapshot_every=10)
    assert not _call(iteration=15, last_snapshot_iteration=10, snapshot_every=10)
    assert _call(iteration=20, last_snapshot_iteration=10, snapshot_every=10)


def test_win_rate_trigger_needs_a_full_window() -> None:
    full = {"snapshot_win_rate": 0.7, "games_in_window": 100}
    assert _call(win_rate=0.7, **full)
    assert not _call(win_rate=0.69, **full)
    assert not _call(win_rate=0.9, snapshot_win_rate=0.7, games_in_window=99)
    assert not _call(win_rate=None, **full)


def test_disabled_rules_never_trigger() -> None:
    assert not _call(iteration=10_000, win_rate=1.0, games_in_window=100)
