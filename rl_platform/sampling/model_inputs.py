"""What a model sees per seat: raw observations, or raw + a rolling opponent history (no Ray).

A model whose type has `opponent_history()` (transformer_lstm) reads
`{obs, opponent_history [H, D], history_mask [H]}`, which
the stock path builds per agent and step in the `OpponentHistory` connector
(rl_platform/connectors/opponent_history.py). `HistoryInputs` keeps the same windows as
arrays `[N, P, H, D]`: a seat's window gets a frame each time the seat observes (acts), a
new game starts a fresh window, and a game's terminal observation is converted from the
window before the reset. The result equals the connector's output row for row
(`windows_from_sequence` in rl_platform/nets/history_window.py is the reference).
`RawInputs` passes observations through for every other model. With `env.hide`,
`HiddenInputs` blanks the hidden features before either sees them, so the history windows
hold the learner's view too (rl_platform/envs/hidden_view.py); scripted seats read the
runner's raw observations, never these.
"""

from collections.abc import Mapping
from typing import Any

import numpy as np

from rl_platform.base.observation_keys import (
    ACTION_MASK_KEY,
    HISTORY_KEY,
    MASK_KEY,
    MASKED_OBS_KEY,
    SELF_KEY,
)
from rl_platform.envs.hidden_view import HiddenView
from rl_platform.envs.vector_game import Observations
from rl_platform.nets.history_window import ObsSplit
from rl_platform.spec.model_type import OpponentHistoryInputs


class RawInputs:
    """Models that read the game's observations as they are."""

    def start(self, obs: Observations, acting: np.ndarray) -> Observations:
        return obs

    def advance(
        self, obs: Observations, acting: np.ndarray, ended: np.ndarray, final_obs: Any
    ) -> tuple[Observations, Any]:
        return obs, final_obs


def _flat_part(obs: Observations, part: tuple[int, int] | str) -> np.ndarray:
    """`[N, P, D]` float32 features of one part of the observations."""
    if isinstance(part, str):
        value = np.asarray(obs[part], np.float32)
        return value.reshape(*value.shape[:2], -1)
    array = obs[MASKED_OBS_KEY] if isinstance(obs, Mapping) else obs
    array = np.asarray(array, np.float32).reshape(*np.shape(array)[:2], -1)
    return array[..., part[0] : part[1]]


class HistoryInputs:
    """Rolling opponent-history windows for N games x P seats (module docstring)."""

    def __init__(self, *, history: int, obs_split: Mapping[str, Any]) -> None:
        self.history = history
        self.split = ObsSplit.from_config(dict(obs_split))
        self.frames: np.ndarray | None = None
        self.mask: np.ndarray | None = None

    def start(self, obs: Observations, acting: np.ndarray) -> Observations:
        opponent = _flat_part(obs, self.split.opponent_part)
        games, seats, dim = opponent.shape
        self.frames = np.zeros((games, seats, self.history, dim), np.float32)
        self.mask = np.zeros((games, seats, self.history), np.float32)
        self._push(opponent, acting)
        return self._model_obs(obs)

    def advance(
        self, obs: Observations, acting: np.ndarray, ended: np.ndarray, final_obs: Any
    ) -> tuple[Observations, Any]:
        """Model inputs of the new observations; converted final observations of ended games."""
        assert self.frames is not None and self.mask is not None
        converted_final = None
        if ended.any():
            frames, mask = self.frames[ended].copy(), self.mask[ended].copy()
            final = _rows(final_obs, ended)
            final_frames, final_mask = _pushed(
                frames, mask, _flat_part(final, self.split.opponent_part)
            )
            converted_final = _place(self._dict(final, final_frames, final_mask), ended, len(ended))
            self.frames[ended] = 0.0
            self.mask[ended] = 0.0
        self._push(_flat_part(obs, self.split.opponent_part), acting)
        return self._model_obs(obs), converted_final

    def _push(self, opponent: np.ndarray, acting: np.ndarray) -> None:
        """Append this step's opponent frame to the windows of the seats that observe it."""
        assert self.frames is not None and self.mask is not None
        pushed_frames, pushed_mask = _pushed(self.frames, self.mask, opponent)
        self.frames = np.where(acting[..., None, None], pushed_frames, self.frames)
        self.mask = np.where(acting[..., None], pushed_mask, self.mask)

    def _model_obs(self, obs: Observations) -> dict[str, np.ndarray]:
        assert self.frames is not None and self.mask is not None
        return self._dict(obs, self.frames.copy(), self.mask.copy())

    def _dict(self, obs: Observations, frames: np.ndarray, mask: np.ndarray) -> dict:
        out = {SELF_KEY: _flat_part(obs, self.split.self_part), HISTORY_KEY: frames, MASK_KEY: mask}
        if isinstance(obs, Mapping) and ACTION_MASK_KEY in obs:
            out[ACTION_MASK_KEY] = np.asarray(obs[ACTION_MASK_KEY], np.float32)
        return out


def _pushed(frames: np.ndarray, mask: np.ndarray, frame: np.ndarray):
    """Windows with `frame` appended as newest (oldest dropped), as `push_frame` does."""
    new_frames = np.concatenate([frames[..., 1:, :], frame[..., None, :]], axis=-2)
    new_mask = np.concatenate([mask[..., 1:], np.ones_like(mask[..., :1])], axis=-1)
    return new_frames, new_mask


def _rows(obs: Any, rows: np.ndarray) -> Any:
    if isinstance(obs, Mapping):
        return {k: np.asarray(v)[rows] for k, v in obs.items()}
    return np.asarray(obs)[rows]


def _place(values: dict[str, np.ndarray], rows: np.ndarray, num_games: int) -> dict:
    """Full `[N, ...]` arrays holding `values` at `rows` (zeros elsewhere)."""
    out = {}
    for key, value in values.items():
        full = np.zeros((num_games, *value.shape[1:]), value.dtype)
        full[rows] = value
        out[key] = full
    return out


class HiddenInputs:
    """`inner`'s inputs built from the learner's view: `view`'s features at 0 (`env.hide`)."""

    def __init__(self, inner: "ModelInputs", view: HiddenView) -> None:
        self.inner = inner
        self.view = view

    def start(self, obs: Observations, acting: np.ndarray) -> Observations:
        return self.inner.start(self.view.apply(obs), acting)

    def advance(
        self, obs: Observations, acting: np.ndarray, ended: np.ndarray, final_obs: Any
    ) -> tuple[Observations, Any]:
        return self.inner.advance(self.view.apply(obs), acting, ended, self.view.apply(final_obs))


ModelInputs = RawInputs | HistoryInputs | HiddenInputs


def model_inputs_for(
    history: OpponentHistoryInputs | None, *, hidden: HiddenView | None = None
) -> ModelInputs:
    """`HistoryInputs` for a model that reads the opponent's history (the model type's
    `opponent_history()`, as transformer_lstm), else raw; behind `HiddenInputs` when the
    spec hides features from the learned policies (`env.hide`)."""
    inputs: ModelInputs
    if history is None:
        inputs = RawInputs()
    elif history.obs_split is None:
        raise ValueError("a model reading the opponent's history needs model.obs_split")
    else:
        inputs = HistoryInputs(history=history.frames, obs_split=history.obs_split)
    return inputs if hidden is None else HiddenInputs(inputs, hidden)
