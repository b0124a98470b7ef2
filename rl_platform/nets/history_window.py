"""Rolling opponent-history windows and observation splitting in plain numpy (no Ray import).

Window layout (shared with the transformer_lstm module):
- frames [H, D] float32, oldest first, newest at index H - 1; slots before the first real
  frame are zeros (left padding),
- mask [H] float32, 1.0 where a slot holds a real frame.
A window starts from the first frame of an episode; `push_frame` drops the oldest slot.

`ObsSplit` says where the agent's own features and the opponent features live in a raw
observation: index ranges into a flat Box observation (`{"self": [0, 32], "opponent": [32,
64]}`) or keys of a Dict observation (`{"self": "me", "opponent": "them"}`). With index ranges
and a Dict observation that follows RLlib's action-masking convention (`{"observations": ...,
"action_mask": ...}`), the ranges apply to `observations`.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from rl_platform.base.observation_keys import MASKED_OBS_KEY


def start_window(frame: np.ndarray, history: int) -> tuple[np.ndarray, np.ndarray]:
    """A window holding only `frame` (newest slot), everything else padding."""
    frame = np.asarray(frame, dtype=np.float32).reshape(-1)
    frames = np.zeros((history, frame.shape[0]), dtype=np.float32)
    mask = np.zeros((history,), dtype=np.float32)
    frames[-1], mask[-1] = frame, 1.0
    return frames, mask


def push_frame(
    frames: np.ndarray, mask: np.ndarray, frame: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """New arrays with `frame` appended as newest and the oldest slot dropped (no mutation).

    Copies on purpose: the previous window is still stored in the episode and must not
    change (the learner re-reads it).
    """
    frame = np.asarray(frame, dtype=np.float32).reshape(-1)
    if frames.shape[-1] != frame.shape[0]:
        raise ValueError(f"frame has {frame.shape[0]} features, window has {frames.shape[-1]}")
    new_frames = np.empty_like(frames, dtype=np.float32)
    new_mask = np.empty_like(mask, dtype=np.float32)
    new_frames[:-1], new_frames[-1] = frames[1:], frame
    new_mask[:-1], new_mask[-1] = mask[1:], 1.0
    return new_frames, new_mask


def windows_from_sequence(frames: np.ndarray, history: int) -> tuple[np.ndarray, np.ndarray]:
    """All windows of one episode at once: frames [T, D] -> ([T, H, D], [T, H]).

    Row t equals pushing frames 0..t one by one; used to check the incremental path and to
    rebuild windows for offline data.
    """
    frames = np.asarray(frames, dtype=np.float32)
    steps, dim = frames.shape
    padded = np.concatenate([np.zeros((history - 1, dim), np.float32), frames], axis=0)
    valid = np.concatenate([np.zeros(history - 1, np.float32), np.ones(steps, np.float32)])
    index = np.arange(steps)[:, None] + np.arange(history)[None, :]
    return padded[index], valid[index]


class HistoryWindow:
    """Stateful convenience wrapper (evaluation scripts, tests): reset() then push(frame)."""

    def __init__(self, history: int) -> None:
        if history < 1:
            raise ValueError(f"history must be >= 1, got {history}")
        self.history = history
        self._frames: np.ndarray | None = None
        self._mask: np.ndarray | None = None

    def reset(self) -> None:
        self._frames = self._mask = None

    def push(self, frame: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self._frames is None or self._mask is None:
            self._frames, self._mask = start_window(frame, self.history)
        else:
            self._frames, self._mask = push_frame(self._frames, self._mask, frame)
        return self._frames, self._mask


@dataclass(frozen=True)
class ObsSplit:
    """Where own and opponent features are in a raw observation (see module docstring)."""

    self_part: tuple[int, int] | str
    opponent_part: tuple[int, int] | str

    @classmethod
    def from_config(cls, raw: Any) -> "ObsSplit":
        if not isinstance(raw, dict) or set(raw) != {"self", "opponent"}:
            raise ValueError(
                "obs_split must be {self: [start, end], opponent: [start, end]} or "
                f"{{self: <dict key>, opponent: <dict key>}}, got {raw!r}"
            )
        own, opponent = _parse_part(raw["self"], "self"), _parse_part(raw["opponent"], "opponent")
        if isinstance(own, str) != isinstance(opponent, str):
            raise ValueError("obs_split: use index ranges for both parts or dict keys for both")
        return cls(own, opponent)

    @property
    def uses_keys(self) -> bool:
        return isinstance(self.self_part, str)

    def split(self, obs: Any) -> tuple[np.ndarray, np.ndarray]:
        """(own features, opponent features), each flattened to float32 1-D."""
        if self.uses_keys:
            if not isinstance(obs, dict):
                raise ValueError("obs_split uses dict keys but the observation is not a dict")
            return _flat(obs[self.self_part]), _flat(obs[self.opponent_part])
        if isinstance(obs, dict):
            obs = obs[MASKED_OBS_KEY]
        flat = _flat(obs)
        (s0, s1), (o0, o1) = self.self_part, self.opponent_part
        if max(s1, o1) > flat.shape[0]:
            raise ValueError(f"obs_split {self} exceeds the observation size {flat.shape[0]}")
        return flat[s0:s1], flat[o0:o1]


def _parse_part(part: Any, name: str) -> tuple[int, int] | str:
    if isinstance(part, str):
        return part
    ok = (
        isinstance(part, list | tuple)
        and len(part) == 2
        and all(isinstance(i, int) and not isinstance(i, bool) for i in part)
        and 0 <= part[0] < part[1]
    )
    if not ok:
        raise ValueError(
            f"obs_split.{name}: expected [start, end] with 0 <= start < end, got {part!r}"
        )
    return int(part[0]), int(part[1])


def _flat(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).reshape(-1)
