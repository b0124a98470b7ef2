"""Rolling opponent-history windows and observation splitting (pure numpy)."""

import numpy as np
import pytest

from rl_platform.nets.history_window import (
    HistoryWindow,
    ObsSplit,
    push_frame,
    start_window,
    windows_from_sequence,
)


def test_start_window_puts_frame_newest_and_pads_left() -> None:
    frames, mask = start_window(np.array([1.0, 2.0]), 3)
    assert frames.tolist() == [[0, 0], [0, 0], [1, 2]]
    assert mask.tolist() == [0, 0, 1]
    assert frames.dtype == np.float32 and mask.dtype == np.float32


def test_push_frame_shifts_drops_oldest_and_does_not_mutate() -> None:
    frames, mask = start_window(np.array([1.0]), 3)
    frames2, mask2 = push_frame(frames, mask, np.array([2.0]))
    frames3, mask3 = push_frame(frames2, mask2, np.array([3.0]))
    frames4, mask4 = push_frame(frames3, mask3, np.array([4.0]))
    assert frames2[:, 0].tolist() == [0, 1, 2] and mask2.tolist() == [0, 1, 1]
    assert frames4[:, 0].tolist() == [2, 3, 4] and mask4.tolist() == [1, 1, 1]
    assert frames[:, 0].tolist() == [0, 0, 1]  # earlier windows unchanged
    with pytest.raises(ValueError, match="features"):
        push_frame(frames, mask, np.array([1.0, 2.0]))


def test_windows_from_sequence_equals_incremental_pushes() -> None:
    rng = np.random.default_rng(0)
    seq = rng.normal(size=(7, 2)).astype(np.float32)
    all_frames, all_masks = windows_from_sequence(seq, 4)
    window = HistoryWindow(4)
    for t in range(7):
        frames, mask = window.push(seq[t])
        np.testing.assert_array_equal(frames, all_frames[t])
        np.testing.assert_array_equal(mask, all_masks[t])
    assert all_masks[1].tolist() == [0, 0, 1, 1]


def test_history_window_reset_starts_fresh() -> None:
    window = HistoryWindow(3)
    window.push(np.array([5.0]))
    window.push(np.array([6.0]))
    window.reset()
    frames, mask = window.push(np.array([7.0]))
    assert frames[:, 0].tolist() == [0, 0, 7] and mask.tolist() == [0, 0, 1]
    with pytest.raises(ValueError):
        HistoryWindow(0)


def test_obs_split_ranges_keys_and_action_mask_dict() -> None:
    split = ObsSplit.from_config({"self": [0, 2], "opponent": [2, 5]})
    own, opp = split.split(np.arange(5.0))
    assert own.tolist() == [0, 1] and opp.tolist() == [2, 3, 4]
    own, opp = split.split({"observations": np.arange(5.0), "action_mask": np.ones(3)})
    assert opp.tolist() == [2, 3, 4]
    keyed = ObsSplit.from_config({"self": "me", "opponent": "them"})
    own, opp = keyed.split({"me": np.ones((2, 2)), "them": np.zeros(3)})
    assert own.shape == (4,) and opp.shape == (3,)
    with pytest.raises(ValueError, match="exceeds"):
        split.split(np.arange(4.0))


@pytest.mark.parametrize(
    "bad",
    [
        {"self": [0, 2]},
        {"self": [2, 2], "opponent": [2, 4]},
        {"self": "me", "opponent": [0, 3]},
        {"self": [0, 1.5], "opponent": [2, 4]},
        [0, 2],
    ],
)
def test_obs_split_rejects_bad_configs(bad: object) -> None:
    with pytest.raises(ValueError, match="obs_split"):
        ObsSplit.from_config(bad)
