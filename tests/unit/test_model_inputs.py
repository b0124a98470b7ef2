"""Opponent-history windows kept as arrays equal the connector's windows, in the learner's
view (`env.hide`) when it hides features (no Ray)."""

import numpy as np

from rl_platform.base.observation_keys import HISTORY_KEY, MASK_KEY, SELF_KEY
from rl_platform.envs.hidden_view import HiddenView
from rl_platform.nets.history_window import windows_from_sequence
from rl_platform.sampling.model_inputs import HistoryInputs, model_inputs_for
from rl_platform.spec.model_type import OpponentHistoryInputs

SPLIT = {"self": [0, 2], "opponent": [2, 4]}


def test_windows_match_the_reference_and_restart_with_each_game() -> None:
    rng = np.random.default_rng(0)
    steps, history = 7, 3
    frames = rng.normal(size=(steps + 1, 1, 2, 4)).astype(np.float32)
    acting = np.ones((1, 2), bool)
    inputs = HistoryInputs(history=history, obs_split=SPLIT)
    seen = [inputs.start(frames[0], acting)]
    no_end = np.zeros(1, bool)
    for t in range(1, 5):
        obs, _ = inputs.advance(frames[t], acting, no_end, None)
        seen.append(obs)
    want_frames, want_mask = windows_from_sequence(frames[:5, 0, 1, 2:4], history)
    got = np.stack([s[HISTORY_KEY][0, 1] for s in seen])
    np.testing.assert_array_equal(got, want_frames)
    np.testing.assert_array_equal(np.stack([s[MASK_KEY][0, 1] for s in seen]), want_mask)
    np.testing.assert_array_equal(seen[-1][SELF_KEY][0, 1], frames[4, 0, 1, :2])

    # The game ends at step 5: the final observation extends the old window, the new
    # game's first observation starts a fresh one.
    final = frames[5]
    obs, final_converted = inputs.advance(frames[6], acting, np.ones(1, bool), final)
    ref_frames, _ = windows_from_sequence(
        np.concatenate([frames[:5, 0, 1, 2:4], final[None, 0, 1, 2:4]]), history
    )
    np.testing.assert_array_equal(final_converted[HISTORY_KEY][0, 1], ref_frames[-1])
    np.testing.assert_array_equal(obs[MASK_KEY][0, 1], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(obs[HISTORY_KEY][0, 1, -1], frames[6, 0, 1, 2:4])


def test_seats_that_wait_keep_their_window() -> None:
    inputs = HistoryInputs(history=2, obs_split=SPLIT)
    first = np.arange(8, dtype=np.float32).reshape(1, 2, 4)
    acting = np.asarray([[True, False]])
    obs = inputs.start(first, acting)
    assert obs[MASK_KEY][0, 0].tolist() == [0.0, 1.0] and obs[MASK_KEY][0, 1].tolist() == [0, 0]
    later, _ = inputs.advance(first + 10, np.asarray([[False, True]]), np.zeros(1, bool), None)
    assert later[MASK_KEY][0, 0].tolist() == [0.0, 1.0]  # seat 0 waited: unchanged
    assert later[HISTORY_KEY][0, 0, -1].tolist() == [2.0, 3.0]
    assert later[HISTORY_KEY][0, 1, -1].tolist() == [16.0, 17.0]


def test_hidden_features_are_blank_in_the_frame_the_window_and_the_final_observation() -> None:
    view = HiddenView(features=("a",), columns=(1, 3))  # one column in each half
    inputs = model_inputs_for(OpponentHistoryInputs(frames=2, obs_split=SPLIT), hidden=view)
    raw = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 4)
    acting = np.ones((1, 2), bool)
    first = inputs.start(raw, acting)
    later, final = inputs.advance(raw + 10, acting, np.ones(1, bool), raw + 20)
    for obs in (first, later, final):
        assert np.all(obs[SELF_KEY][..., 1] == 0.0) and np.all(obs[SELF_KEY][..., 0] != 0.0)
        assert np.all(obs[HISTORY_KEY][..., -1, 1] == 0.0)
        assert np.all(obs[HISTORY_KEY][..., -1, 0] != 0.0)
    assert raw[0, 0, 1] == 2.0  # the game's own array (scripted seats read it) is untouched
