"""Scripted duel opponents that act from the egocentric observation only, vectorized over B.

Every agent is `act(obs[B, 64], rng) -> actions[B]` (int64 egocentric actions), so the same
function plays either side and can drive thousands of games per call. They are named and
looked up in the one registry of scripted policies, `rl_platform.teachers` (`scripted://duel/NAME`).

`based` is the all-round reference. `rusher`, `blocker` and `zoner` are styles: each leans on
one tool, so that it shows in its history (what it does, from how far) and loses to a different
answer (docs/duel.md, "Scripted styles", has the measured cross table). `counter` (counter.py)
is the style whose answer only its history shows.
"""

from collections.abc import Callable

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.actions import NUM_ACTIONS, Action
from rl_platform.envs.duel.observation import VELOCITY_SCALE, Obs
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.tactics import (
    View,
    approach,
    in_hit_line,
    on_stage_after,
    op_busy_frames,
    op_threat,
    recover,
)

ActFn = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def act_random(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, NUM_ACTIONS, size=len(obs), dtype=np.int64)


def act_constant(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.full(len(obs), Action.IDLE, dtype=np.int64)


def act_based(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    v = View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    roll = rng.random(len(obs))
    recovering, recover_action = recover(v)
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
    approaching, approach_action = approach(v, adx, roll)
    conditions = [recovering, block, grab, heavy, light, turn, drop, hop, approaching]
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


def act_rusher(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Dashes in and spams lights; heavies only an opponent busy for 6+ more frames (hitstun,
    recovery) and 3% at random; never blocks or grabs. Beaten by blocking: every blocked light
    leaves it in recovery next to the blocker."""
    v = View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    roll = rng.random(len(obs))
    recovering, recover_action = recover(v)
    side = np.sign(v.dx)
    aim = in_hit_line(v, adx)
    heavy = aim & (ady < 1.0) & (adx < 1.8) & ((op_busy_frames(v) > 5) | (roll < 0.03))
    light = aim & (ady < 0.9) & (adx < 1.3)
    turn = ~aim & (adx < 2.5)
    dash = v.grounded & v.facing_opp & (adx > 1.6) & (v.me[:, Obs.DASH_COOLDOWN] == 0)
    dash &= on_stage_after(v, side, R.DASH_SPEED * R.DASH_FRAMES)
    hop = v.grounded & (v.dy > 1.5) & (adx < 3.0) & (v.me[:, Obs.JUMP_COOLDOWN] == 0)
    drop = (v.me[:, Obs.ON_PLATFORM] > 0.5) & (v.dy < -1.0)
    approach = (adx > 0.9) & on_stage_after(v, side, 0.8)
    conditions = [recovering, heavy, light, turn, dash, hop, drop, approach]
    choices = [
        recover_action,
        Action.HEAVY,
        Action.LIGHT,
        v.toward,
        Action.DASH,
        Action.JUMP,
        Action.DOWN,
        v.toward,
    ]
    return np.select(conditions, choices, Action.IDLE).astype(np.int64)


def act_blocker(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Holds the centre and blocks whenever the opponent is close or attacking, then punishes
    recovery with grab, light or heavy; never approaches. Beaten by grabs (they go through the
    block) and by pokes from outside its punish range, which wear its shield down."""
    v = View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    recovering, recover_action = recover(v)
    in_line = in_hit_line(v, adx)
    aim = in_line & (ady < 0.9)
    # Punish only with what lands before the opponent is free to block: the attack's startup
    # plus the frame it is chosen on must fit into the opponent's busy frames.
    busy = op_busy_frames(v)
    grab = aim & v.grounded & (adx < 1.0) & (ady < 0.5) & (busy >= 3)
    heavy = aim & (adx < 1.8) & (busy >= 6)
    light = aim & (adx < 1.3) & (busy >= 3)
    turn = ~in_line & (adx < 3.0)
    close = (adx < 2.4) & (ady < 1.5)
    guard = op_threat(v) | v.op_mode(Mode.DASH) | (adx < 1.6)
    # Above 0.3 shield one blocked heavy (0.28) cannot break it.
    block = v.grounded & close & guard & (v.me[:, Obs.SHIELD] > 0.3)
    # Waiting at the centre keeps block pushback from carrying it off a ledge.
    centre = np.where(v.sx > 0, Action.LEFT, Action.RIGHT)
    drift = (np.abs(v.sx) > 2.0) & ~close
    conditions = [recovering, grab, heavy, light, turn, block, drift]
    choices = [
        recover_action,
        Action.GRAB,
        Action.HEAVY,
        Action.LIGHT,
        v.toward,
        Action.BLOCK,
        centre,
    ]
    return np.select(conditions, choices, Action.IDLE).astype(np.int64)


def act_zoner(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Walks to the edge of its heavy's reach and pokes with heavies only, timed for an opponent
    walking in; backs off (or jumps away at a ledge) when the opponent gets close. Beaten by
    getting close: there its slow heavy loses to faster attacks, it turns its back to retreat,
    and a whiffed or blocked heavy leaves 7 recovery frames."""
    v = View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    recovering, recover_action = recover(v)
    side = np.sign(v.dx)
    # The gap when a heavy chosen now becomes active: minus its own slide (friction halves
    # the speed each frame, so about one frame's worth) and the opponent's closing speed
    # over the startup.
    my_closing = v.me[:, Obs.VX] * VELOCITY_SCALE * side
    op_closing = -v.op[:, Obs.VX] * VELOCITY_SCALE * side
    gap = adx - my_closing - op_closing * R.ATTACK_STARTUP[Mode.HEAVY]
    aim = in_hit_line(v, adx)
    in_range = gap < R.ATTACK_REACH[Mode.HEAVY]
    poke = aim & (ady < 1.0) & in_range
    too_close = v.grounded & (adx < 1.3)
    retreat = too_close & on_stage_after(v, -side, 0.6)
    jump_away = too_close & (v.me[:, Obs.JUMP_COOLDOWN] == 0)
    turn = ~aim & (adx < 3.5)
    approach = ~in_range & on_stage_after(v, side, 0.6)
    away = np.where(side > 0, Action.LEFT, Action.RIGHT)
    conditions = [recovering, retreat, jump_away, poke, turn, approach]
    choices = [recover_action, away, Action.JUMP, Action.HEAVY, v.toward, v.toward]
    return np.select(conditions, choices, Action.IDLE).astype(np.int64)
