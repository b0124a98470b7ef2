"""Egocentric 64-float observations: 32 about the viewer, then the same 32 about the opponent.

Both halves share one layout (`Obs` gives the index inside a half). Player 1 sees the world
mirrored in x (position, velocity and facing are negated), so both players see themselves
starting on the left facing right; actions are mirrored to match (see `actions.py`).
"""

from enum import IntEnum
from types import SimpleNamespace

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.state import DuelState

OBS_SIZE = 64
HALF_SIZE = 32
SELF_SLICE = slice(0, HALF_SIZE)
OPPONENT_SLICE = slice(HALF_SIZE, OBS_SIZE)
# Every feature is built to lie well inside this bound (the Box space uses it).
OBS_BOUND = 2.0
VELOCITY_SCALE = 2.0
Y_SCALE = 10.0


class Obs(IntEnum):
    """Index of a feature inside one half (add 32 for the opponent's copy)."""

    X = 0
    """x / 13 (blast zone at +-1), mirrored for player 1."""
    VX = 1
    """x velocity / 2, mirrored for player 1."""
    FACING = 2
    """+1 facing +x, -1 facing -x, mirrored for player 1."""
    Y = 3
    """y / 10 (stage top 0, platforms 0.3, blast zones -0.8 and 1.6)."""
    VY = 4
    HP = 5
    """HP / 100 of the current stock."""
    STOCKS = 6
    """Stocks left / starting stocks."""
    ON_GROUND = 7
    JUMPS = 8
    """Jumps left / 2."""
    AIR_DASH = 9
    """1 while the air dash is available."""
    SHIELD = 10
    FAST_FALL = 11
    EDGE_MARGIN = 12
    """(6 - |x|) / 6: 1 at the stage centre, 0 at a ledge, negative off stage."""
    ON_PLATFORM = 13
    MODE_TIME = 14
    """Frames in the current mode / 20, capped at 1."""
    STARTUP_LEFT = 15
    """Frames until the current attack becomes active / 10 (0 when not in startup)."""
    ATTACK_ACTIVE = 16
    RECOVERY_LEFT = 17
    """Frames of attack recovery left / 10 (0 otherwise)."""
    STUN_LEFT = 18
    """Frames of hitstun / shield break left / 30."""
    INVULN_LEFT = 19
    DASH_COOLDOWN = 20
    JUMP_COOLDOWN = 21
    MODE_ONE_HOT = 22
    """22..29: one-hot of `rules.Mode` (FREE, DASH, LIGHT, HEAVY, GRAB, BLOCK, HITSTUN,
    STUNNED)."""
    TIME_LEFT = 30
    """Fraction of the time limit left (same in both halves)."""
    PRIVATE_DRAW = 31
    """The player's private draw for this game, uniform in [0, 1): shown in the viewer's own
    half only (0 in the opponent half), like a hidden card. Scripted players with a hidden
    per-game intent (`counter`) read theirs here; an opponent can learn it only from how
    the player acts."""


# Plain-int indices for the hot path (IntEnum attribute access is slow on Python 3.11).
_I = SimpleNamespace(**{feature.name: int(feature) for feature in Obs})
_MIRRORED = slice(Obs.X, Obs.FACING + 1)
_MIRRORED_OPPONENT = slice(HALF_SIZE + Obs.X, HALF_SIZE + Obs.FACING + 1)
_MODE_SLICE = slice(Obs.MODE_ONE_HOT, Obs.MODE_ONE_HOT + R.NUM_MODES)
_MODES = np.arange(R.NUM_MODES, dtype=np.int32)


def feature_columns() -> dict[str, tuple[int, ...]]:
    """Each `Obs` feature by its lower-case name (`hp`, `shield`, `mode_one_hot`, ...) and its
    columns in both halves: what `env.hide` blanks from the learned policies' view
    (rl_platform/envs/hidden_view.py). `mode_one_hot` spans its 8 columns per half."""
    widths = {Obs.MODE_ONE_HOT: R.NUM_MODES}
    columns = {}
    for feature in Obs:
        own = range(feature, feature + widths.get(feature, 1))
        columns[feature.name.lower()] = (*own, *(HALF_SIZE + i for i in own))
    return columns


def write_observations(
    s: DuelState, out: np.ndarray, *, stocks: int, max_steps: int, rows: slice | np.ndarray
) -> None:
    """Fill `out[rows]` (out has shape (N, 2, 64)) from the state of the selected games."""
    in_place = isinstance(rows, slice)
    block = out[rows] if in_place else np.empty((len(rows), 2, OBS_SIZE), np.float32)
    half = block[:, :, :HALF_SIZE]
    _write_half(s, half, stocks=stocks, rows=rows)
    half[:, :, _I.TIME_LEFT] = (1.0 - s.t[rows] / max_steps)[:, None]
    half[:, :, _I.PRIVATE_DRAW] = s.draw[rows]
    block[:, :, HALF_SIZE:] = half[:, ::-1]
    block[:, :, HALF_SIZE + _I.PRIVATE_DRAW] = 0.0
    # The viewer's mirror applies to both halves: player 1 sees everything flipped in x.
    block[:, 1, _MIRRORED] *= -1.0
    block[:, 1, _MIRRORED_OPPONENT] *= -1.0
    if not in_place:
        out[rows] = block


def _write_half(s: DuelState, h: np.ndarray, *, stocks: int, rows: slice | np.ndarray) -> None:
    """Write the 30 per-player features into `h` of shape (N, 2, 32)."""
    x, y, mode, timer = s.x[rows], s.y[rows], s.mode[rows], s.timer[rows]
    h[:, :, _I.X] = x / R.BLAST_X
    h[:, :, _I.VX] = s.vx[rows] / VELOCITY_SCALE
    h[:, :, _I.FACING] = s.facing[rows]
    h[:, :, _I.Y] = y / Y_SCALE
    h[:, :, _I.VY] = s.vy[rows] / VELOCITY_SCALE
    h[:, :, _I.HP] = s.hp[rows] / R.HP_MAX
    h[:, :, _I.STOCKS] = s.stocks[rows] / stocks
    h[:, :, _I.ON_GROUND] = s.on_ground[rows]
    h[:, :, _I.JUMPS] = s.jumps[rows] / R.MAX_JUMPS
    h[:, :, _I.AIR_DASH] = s.air_dash[rows]
    h[:, :, _I.SHIELD] = s.shield[rows]
    h[:, :, _I.FAST_FALL] = s.fast_fall[rows]
    h[:, :, _I.EDGE_MARGIN] = 1.0 - np.abs(x) / R.STAGE_HALF_WIDTH
    h[:, :, _I.ON_PLATFORM] = y == R.PLATFORM_Y
    h[:, :, _I.MODE_TIME] = np.minimum(timer, R.MODE_TIMER_SCALE) / R.MODE_TIMER_SCALE
    startup, active_end = R.ATTACK_STARTUP[mode], R.ATTACK_ACTIVE_END[mode]
    h[:, :, _I.STARTUP_LEFT] = np.maximum(startup - timer, 0) / R.MAX_PHASE_FRAMES
    h[:, :, _I.ATTACK_ACTIVE] = (timer >= startup) & (timer < active_end)
    recovery_left = np.where(timer >= active_end, R.ATTACK_TOTAL[mode] - timer, 0)
    h[:, :, _I.RECOVERY_LEFT] = np.maximum(recovery_left, 0) / R.MAX_PHASE_FRAMES
    h[:, :, _I.STUN_LEFT] = s.stun[rows] / R.MAX_STUN_FRAMES
    h[:, :, _I.INVULN_LEFT] = s.invuln[rows] / R.RESPAWN_INVULN
    h[:, :, _I.DASH_COOLDOWN] = s.dash_cd[rows] / R.DASH_COOLDOWN
    h[:, :, _I.JUMP_COOLDOWN] = s.jump_cd[rows] / R.JUMP_COOLDOWN
    h[:, :, _MODE_SLICE] = mode[:, :, None] == _MODES
