"""Scripted connect-four opponents in pure numpy, vectorized over a batch of boards.

Boards follow PettingZoo's `connect_four_v3` observation: `[B, 6, 7, 2]` (or flattened
`[B, 84]`), row 0 at the top, channel 0 = the acting player's pieces, channel 1 = the
opponent's. Every agent is `act(obs, rng) -> actions[B]` where `obs` is a mapping with the board
under `observations` (RLlib's action-masking convention) or `observation` (PettingZoo's) and
the legal columns under `action_mask` `[B, 7]`.

`one_ply` looks one move ahead: it plays a winning move if there is one, otherwise blocks a
column where the opponent would win next, otherwise the legal column closest to the centre.
"""

from collections.abc import Mapping
from typing import Any

import numpy as np

from rl_platform.envs.connect_four.board import COLS, LINES, ROWS

# Columns by preference: centre first (a centre piece takes part in the most lines).
CENTRE_ORDER = (3, 2, 4, 1, 5, 0, 6)


def split_obs(obs: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(own [B, 6, 7] bool, opponent [B, 6, 7] bool, legal [B, 7] bool) from an observation."""
    board = obs["observations"] if "observations" in obs else obs["observation"]
    board = np.asarray(board).reshape(-1, ROWS, COLS, 2) > 0.5
    legal = np.asarray(obs["action_mask"]).reshape(-1, COLS) > 0.5
    return board[..., 0], board[..., 1], legal


def landing_rows(own: np.ndarray, opp: np.ndarray) -> np.ndarray:
    """Row a piece dropped into each column lands on, [B, 7]; -1 for a full column."""
    empty = ~(own | opp)  # [B, 6, 7]
    # The lowest empty cell is the largest row index whose cell is empty.
    rows = np.arange(ROWS)[None, :, None]
    return np.where(empty, rows, -1).max(axis=1)


def completes_line(pieces: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """[B, 7] bool: dropping one more of `pieces` into column c makes four in a row."""
    batch = pieces.shape[0]
    flat = pieces.reshape(batch, 1, ROWS * COLS).repeat(COLS, axis=1)  # [B, 7, 42]
    playable = rows >= 0
    b, c = np.nonzero(playable)
    flat[b, c, rows[b, c] * COLS + c] = True
    return flat[:, :, LINES].all(axis=-1).any(axis=-1) & playable


def _first_by_centre(candidates: np.ndarray) -> np.ndarray:
    """Index of the first True column in CENTRE_ORDER per row (-1 if none)."""
    ordered = candidates[:, CENTRE_ORDER]
    first = ordered.argmax(axis=1)
    return np.where(ordered.any(axis=1), np.asarray(CENTRE_ORDER)[first], -1)


def act_one_ply(obs: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    """Win now, else block the opponent's immediate win, else the most central legal column."""
    own, opp, legal = split_obs(obs)
    rows = landing_rows(own, opp)
    choice = _first_by_centre(legal)
    for pieces in (opp, own):  # later assignments win: own win beats a block
        hits = completes_line(pieces, rows) & legal
        choice = np.where(hits.any(axis=1), _first_by_centre(hits), choice)
    # A terminal board can have no legal column; any action is ignored there.
    return np.maximum(choice, 0).astype(np.int64)


def act_random(obs: Mapping[str, Any], rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal column."""
    _, _, legal = split_obs(obs)
    scores = rng.random(legal.shape) + legal  # legal columns score in [1, 2), illegal in [0, 1)
    return scores.argmax(axis=1).astype(np.int64)
