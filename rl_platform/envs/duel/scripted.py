"""Scripted duel opponents that act from the egocentric observation only, vectorized over B.

Every agent is `act(obs[B, 64], rng) -> actions[B]` (int64 egocentric actions), so the same
function plays either side and can drive thousands of games per call. They are named and
looked up in the one registry of scripted policies, `rl_platform.teachers` (`scripted://duel/NAME`).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.actions import NUM_ACTIONS, Action
from rl_platform.envs.duel.observation import HALF_SIZE, Y_SCALE, Obs
from rl_platform.envs.duel.rules import Mode

ActFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def act_random(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, NUM_ACTIONS, size=len(obs), dtype=np.int64)


def act_constant(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.full(len(obs), Action.IDLE, dtype=np.int64)


@dataclass
class _View:
    """Decoded egocentric quantities used by the `based` rules (all shape (B,))."""

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
    def of(cls, obs: np.ndarray) -> "_View":
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


def _recover(v: _View) -> tuple[np.ndarray, np.ndarray]:
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


def act_based(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    v = _View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    roll = rng.random(len(obs))
    recovering, recover_action = _recover(v)
    op_attacking = v.op_mode(Mode.LIGHT) | v.op_mode(Mode.HEAVY)
    op_threat = (v.op[:, Obs.STARTUP_LEFT] > 0) | (v.op[:, Obs.ATTACK_ACTIVE] > 0.5)
    op_facing_me = v.op[:, Obs.FACING] * v.dx < 0
    block = (op_attacking & op_threat & op_facing_me & v.grounded & (adx < 2.3) & (ady < 1.5)) & (
        v.me[:, Obs.SHIELD] > 0.25
    )
    grab = v.op_mode(Mode.BLOCK) & v.grounded & v.facing_opp & (adx < 1.0) & (ady < 0.5)
    op_open = (
        v.op_mode(Mode.HITSTUN)
        | v.op_mode(Mode.STUNNED)
        | (v.op[:, Obs.RECOVERY_LEFT] > 0.2)
        | (v.op[:, Obs.HP] < 0.35)
    )
    heavy = v.facing_opp & (ady < 1.0) & (adx < 1.8) & op_open
    light = v.facing_opp & (ady < 0.9) & (adx < 1.3)
    turn = ~v.facing_opp & (adx < 2.5)
    on_platform = v.me[:, Obs.ON_PLATFORM] > 0.5
    drop = on_platform & (v.dy < -1.0)
    safe_zone = np.abs(v.sx) < R.STAGE_HALF_WIDTH - 1.5
    hop = v.grounded & safe_zone & (v.me[:, Obs.JUMPS] > 0) & (v.me[:, Obs.JUMP_COOLDOWN] == 0)
    hop &= ((v.dy > 1.5) & (adx < 3.5)) | (roll < 0.01)
    approach, approach_action = _approach(v, adx, roll)
    conditions = [recovering, block, grab, heavy, light, turn, drop, hop, approach]
    choices = [
        recover_action,
        Action.BLOCK,
        Action.GRAB,
        Action.HEAVY,
        np.where(roll < 0.2, Action.HEAVY, Action.LIGHT),
        v.toward,
        Action.DOWN,
        Action.JUMP,
        approach_action,
    ]
    return np.select(conditions, choices, Action.IDLE).astype(np.int64)


def _approach(v: _View, adx: np.ndarray, roll: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walk (or dash) towards the opponent, but never walk off a ledge after it."""
    step_x = v.sx + np.sign(v.dx) * 0.8
    stays_on = np.abs(step_x) < R.STAGE_HALF_WIDTH - 0.6
    wanted = (adx > 1.1) & stays_on
    dash = v.grounded & v.facing_opp & (adx > 4.0) & (roll < 0.1)
    return wanted, np.where(dash, Action.DASH, v.toward)
