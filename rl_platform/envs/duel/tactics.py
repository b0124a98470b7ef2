"""What the scripted duel players read from an egocentric observation, and the moves they share.

`View` decodes one side's observation `[B, 64]` into positions and distances; the helpers
below are the rules several styles use (getting back on stage, approaching without walking off
a ledge, reading whether the opponent is busy or about to hit). Everything is vectorized over B.
"""

from dataclasses import dataclass

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.actions import Action
from rl_platform.envs.duel.observation import HALF_SIZE, Y_SCALE, Obs
from rl_platform.envs.duel.rules import Mode


@dataclass
class View:
    """Decoded egocentric quantities the scripted rules use (all shape (B,))."""

    me: np.ndarray
    op: np.ndarray
    sx: np.ndarray
    sy: np.ndarray
    dx: np.ndarray
    dy: np.ndarray
    grounded: np.ndarray
    facing_opp: np.ndarray
    toward: np.ndarray

    @classmethod
    def of(cls, obs: np.ndarray) -> "View":
        me, op = obs[:, :HALF_SIZE], obs[:, HALF_SIZE:]
        sx, sy = me[:, Obs.X] * R.BLAST_X, me[:, Obs.Y] * Y_SCALE
        dx = op[:, Obs.X] * R.BLAST_X - sx
        dy = op[:, Obs.Y] * Y_SCALE - sy
        return cls(
            me=me,
            op=op,
            sx=sx,
            sy=sy,
            dx=dx,
            dy=dy,
            grounded=me[:, Obs.ON_GROUND] > 0.5,
            facing_opp=me[:, Obs.FACING] * dx > 0,
            toward=np.where(dx >= 0, Action.RIGHT, Action.LEFT),
        )

    def op_mode(self, mode: Mode) -> np.ndarray:
        return self.op[:, Obs.MODE_ONE_HOT + mode] > 0.5


def recover(v: View) -> tuple[np.ndarray, np.ndarray]:
    """(needed, action) for getting back onto the stage from off it or below it."""
    ax = np.abs(v.sx)
    off = (ax > R.STAGE_HALF_WIDTH) | (v.sy < -0.05)
    under = (ax < R.STAGE_HALF_WIDTH - 0.05) & (v.sy < -0.05)
    to_center = np.where(v.sx > 0, Action.LEFT, Action.RIGHT)
    outward = np.where(v.sx > 0, Action.RIGHT, Action.LEFT)
    facing_center = v.me[:, Obs.FACING] * -np.sign(v.sx) > 0
    can_dash = (
        (v.me[:, Obs.AIR_DASH] > 0.5)
        & (v.me[:, Obs.DASH_COOLDOWN] == 0)
        & facing_center
        & (ax > R.STAGE_HALF_WIDTH + 1.5)
    )
    can_jump = (
        (v.me[:, Obs.JUMPS] > 0)
        & (v.me[:, Obs.JUMP_COOLDOWN] == 0)
        & (v.me[:, Obs.VY] < 0.1)
        & (v.sy < 1.0)
    )
    # Under the stage a jump would bonk its underside: first move out past the ledge.
    action = np.select([under, can_dash, can_jump], [outward, Action.DASH, Action.JUMP], to_center)
    return off, action


def approach(v: View, adx: np.ndarray, roll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walk (or dash) towards the opponent, but never walk off a ledge after it."""
    stays_on = on_stage_after(v, np.sign(v.dx), 0.8)
    wanted = (adx > 1.1) & stays_on
    dash = v.grounded & v.facing_opp & (adx > 4.0) & (roll < 0.1)
    return wanted, np.where(dash, Action.DASH, v.toward)


def on_stage_after(v: View, direction: np.ndarray, distance: float) -> np.ndarray:
    """Whether moving `distance` towards `direction` (+1 right, -1 left) stays well on stage."""
    return np.abs(v.sx + direction * distance) < R.STAGE_HALF_WIDTH - 0.6


def in_hit_line(v: View, adx: np.ndarray) -> np.ndarray:
    """Facing the opponent, or so close that the hitbox's back reach covers it anyway
    (turning towards an overlapping opponent would flip the facing every frame)."""
    return v.facing_opp | (adx < R.BACK_REACH - 0.05)


def op_busy_frames(v: View) -> np.ndarray:
    """Frames until the opponent can act again: attack recovery, hitstun or a shield break."""
    stunned = v.op_mode(Mode.HITSTUN) | v.op_mode(Mode.STUNNED)
    stun = np.where(stunned, v.op[:, Obs.STUN_LEFT] * R.MAX_STUN_FRAMES, 0.0)
    return np.maximum(v.op[:, Obs.RECOVERY_LEFT] * R.MAX_PHASE_FRAMES, stun)


def op_threat(v: View) -> np.ndarray:
    """The opponent's attack has not hit yet: its startup or active frames."""
    attacking = v.op_mode(Mode.LIGHT) | v.op_mode(Mode.HEAVY) | v.op_mode(Mode.GRAB)
    return attacking & ((v.op[:, Obs.STARTUP_LEFT] > 0) | (v.op[:, Obs.ATTACK_ACTIVE] > 0.5))
