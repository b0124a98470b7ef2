"""Per-frame timers, inputs, movement and stage collisions for all games at once.

Every function works on whole (N, 2) arrays with masks and `np.where`; none loops over games.
Actions passed in here are already in world frame (see `actions.MIRROR_ACTION`).
"""

import numpy as np

from rl_platform.envs.duel import actions as A
from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.actions import NUM_ACTIONS, Action
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.state import DuelState

_FOREVER = np.iinfo(np.int32).max
# Frames after which a mode ends by itself; stun modes end on their counter, BLOCK on release.
_MODE_DURATION = np.full(R.NUM_MODES, _FOREVER, dtype=np.int32)
_MODE_DURATION[[Mode.LIGHT, Mode.HEAVY, Mode.GRAB]] = R.ATTACK_TOTAL[
    [Mode.LIGHT, Mode.HEAVY, Mode.GRAB]
]
_MODE_DURATION[Mode.DASH] = R.DASH_FRAMES

_MOVE_DIR = np.zeros(NUM_ACTIONS, dtype=np.float32)
_MOVE_DIR[Action.LEFT], _MOVE_DIR[Action.RIGHT] = -1.0, 1.0
# Mode an action starts from FREE; -1 for actions that start no mode.
_ACTION_MODE = np.full(NUM_ACTIONS, -1, dtype=np.int32)
_ACTION_MODE[Action.LIGHT] = Mode.LIGHT
_ACTION_MODE[Action.HEAVY] = Mode.HEAVY
_ACTION_MODE[Action.GRAB] = Mode.GRAB
_ACTION_MODE[Action.BLOCK] = Mode.BLOCK
_GROUND_ONLY = np.zeros(R.NUM_MODES + 1, dtype=bool)  # index -1 (no mode) wraps to the end
_GROUND_ONLY[[Mode.GRAB, Mode.BLOCK]] = True


def begin_frame(s: DuelState, actions: np.ndarray) -> None:
    """Advance counters and end modes whose time is up (or BLOCK when it is released)."""
    s.timer += 1
    for counter in (s.stun, s.invuln, s.dash_cd, s.jump_cd, s.drop):
        np.subtract(counter, 1, out=counter, where=counter > 0)
    mode = s.mode
    ends = s.timer >= _MODE_DURATION[mode]
    ends |= (mode >= R.MODE_HITSTUN) & (s.stun == 0)
    ends |= (mode == R.MODE_BLOCK) & (actions != A.ACT_BLOCK)
    np.copyto(mode, R.MODE_FREE, where=ends)
    np.copyto(s.timer, 0, where=ends)


def apply_inputs(s: DuelState, actions: np.ndarray) -> np.ndarray:
    """Apply actions of FREE characters; returns the horizontal input direction (N, 2)."""
    free = s.mode == R.MODE_FREE
    ground = s.on_ground  # an alias: clearing bits below updates the state in place
    move = _MOVE_DIR[actions] * free
    np.copyto(s.facing, move, where=move != 0)

    jump = free & (actions == A.ACT_JUMP) & (s.jumps > 0) & (s.jump_cd == 0)
    s.vy[:] = np.where(jump, np.where(ground, R.JUMP_SPEED, R.AIR_JUMP_SPEED), s.vy)
    s.jumps -= jump
    np.copyto(s.jump_cd, R.JUMP_COOLDOWN, where=jump)

    down = free & (actions == A.ACT_DOWN)
    drop = down & ground & (s.y > 0.5 * R.PLATFORM_Y)
    np.copyto(s.drop, R.DROP_FRAMES, where=drop)
    fast_fall = down & ~ground
    np.copyto(s.vy, -R.FAST_FALL_SPEED, where=fast_fall)
    s.fast_fall[:] = (s.fast_fall | fast_fall) & ~jump
    ground &= ~(jump | drop)

    dash = free & (actions == A.ACT_DASH) & (s.dash_cd == 0) & (ground | s.air_dash)
    if dash.any():
        np.copyto(s.mode, R.MODE_DASH, where=dash)
        np.copyto(s.timer, 0, where=dash)
        np.copyto(s.vx, s.facing * R.DASH_SPEED, where=dash)
        # An air dash holds altitude, which makes it the main recovery tool.
        np.copyto(s.vy, 0.0, where=dash & ~ground)
        s.air_dash &= ground | ~dash
        np.copyto(s.dash_cd, R.DASH_COOLDOWN, where=dash)

    new_mode = _ACTION_MODE[actions]
    start = free & (new_mode >= 0) & (ground | ~_GROUND_ONLY[new_mode])
    start &= (new_mode != R.MODE_BLOCK) | (s.shield > 0)
    np.copyto(s.mode, new_mode, where=start)
    np.copyto(s.timer, 0, where=start)
    s.hit_done &= ~start
    return move


def move_bodies(s: DuelState, move: np.ndarray) -> None:
    """Velocities (walk, air drift, knockback drag, gravity), then positions and collisions."""
    ground = s.on_ground
    dashing = s.mode == R.MODE_DASH
    vx = s.vx
    vx_ground = np.where(move != 0, move * R.WALK_SPEED, vx * R.GROUND_FRICTION)
    drift = np.clip(move * R.AIR_SPEED - vx, -R.AIR_ACCEL, R.AIR_ACCEL)
    vx_air = np.where(s.mode == R.MODE_HITSTUN, vx * R.KNOCKBACK_DRAG, vx + drift)
    vx[:] = np.where(dashing, vx, np.where(ground, vx_ground, vx_air))
    np.clip(vx, -R.MAX_SPEED, R.MAX_SPEED, out=vx)

    falling = ~(ground | dashing)
    vy = s.vy
    np.subtract(vy, R.GRAVITY, out=vy, where=falling)
    fall_limit = np.where(s.fast_fall, -R.FAST_FALL_SPEED, -R.MAX_FALL_SPEED)
    np.clip(vy, fall_limit, R.MAX_SPEED, out=vy)
    np.copyto(vy, 0.0, where=ground)

    prev_x, prev_y = s.x.copy(), s.y.copy()
    s.x += vx
    s.y += vy
    _leave_unsupported_ground(s)
    _collide_stage(s, prev_x, prev_y)
    _grab_ledges(s)


def _leave_unsupported_ground(s: DuelState) -> None:
    """Characters that walked off an edge start falling and keep only their air jump."""
    ax = np.abs(s.x)
    on_main = (s.y == 0.0) & (ax <= R.STAGE_HALF_WIDTH)
    on_platform = (s.y == R.PLATFORM_Y) & (ax >= R.PLATFORM_INNER) & (ax <= R.PLATFORM_OUTER)
    walked_off = s.on_ground & ~(on_main | on_platform)
    s.on_ground &= ~walked_off
    np.minimum(s.jumps, np.where(walked_off, R.MAX_JUMPS - 1, R.MAX_JUMPS), out=s.jumps)


def _collide_stage(s: DuelState, prev_x: np.ndarray, prev_y: np.ndarray) -> None:
    """Resolve the solid main stage (top, sides, underside) and the soft platforms."""
    x, y = s.x, s.y
    ax = np.abs(x)
    inside = (ax < R.STAGE_HALF_WIDTH) & (y < 0.0) & (y > -R.STAGE_DEPTH)
    from_above = inside & (prev_y >= 0.0)
    from_side = inside & ~from_above & (np.abs(prev_x) >= R.STAGE_HALF_WIDTH)
    from_below = inside & ~(from_above | from_side)
    on_platform = (
        (s.drop == 0)
        & (prev_y >= R.PLATFORM_Y)
        & (y < R.PLATFORM_Y)
        & (ax >= R.PLATFORM_INNER)
        & (ax <= R.PLATFORM_OUTER)
    )
    if from_side.any():
        np.copyto(x, np.sign(prev_x) * R.STAGE_HALF_WIDTH, where=from_side)
        np.copyto(s.vx, 0.0, where=from_side)
    np.copyto(y, -R.STAGE_DEPTH, where=from_below)
    np.copyto(y, 0.0, where=from_above)
    np.copyto(y, R.PLATFORM_Y, where=on_platform)
    np.copyto(s.vy, 0.0, where=from_below)
    _land(s, from_above | on_platform)


def _land(s: DuelState, landed: np.ndarray) -> None:
    np.copyto(s.vy, 0.0, where=landed)
    s.on_ground |= landed
    np.copyto(s.jumps, R.MAX_JUMPS, where=landed)
    s.air_dash |= landed
    s.fast_fall &= ~landed


def _grab_ledges(s: DuelState) -> None:
    """Free airborne characters next to a ledge, facing the stage, climb onto its edge."""
    ax = np.abs(s.x)
    near = (
        (ax >= R.STAGE_HALF_WIDTH)
        & (ax <= R.STAGE_HALF_WIDTH + R.LEDGE_REACH)
        & (s.y < 0.0)
        & (s.y >= -R.LEDGE_DEPTH)
    )
    # Only when facing the stage, so walking off a ledge does not snap straight back.
    snap = near & ~s.on_ground & (s.mode <= R.MODE_DASH) & (s.facing * s.x < 0)
    if not snap.any():
        return
    np.copyto(s.x, np.sign(s.x) * (R.STAGE_HALF_WIDTH - R.LEDGE_CLIMB_INSET), where=snap)
    np.copyto(s.y, 0.0, where=snap)
    np.copyto(s.vx, 0.0, where=snap)
    _land(s, snap)
