"""`answerer`: a scripted duel player that answers each open style from the current frame.

The open styles (`based`, `rusher`, `blocker`, `zoner`; docs/duel.md, "Scripted styles") show
their tools as they use them, so one set of reactions answers all four without telling them
apart: block an attack that is coming (a rusher's light, a zoner's heavy), punish what is busy
(recovery, hitstun, a broken shield) with the fastest attack that lands before it can act,
grab a blocking opponent (grabs go through the block) instead of hitting its shield, and close
in, dashing from afar, on an opponent that keeps its distance. It is the BC kickstart teacher
of `benchmarks/opponent_encoder_value.py` (issue #43): every model starts with these answers,
so the open styles stop deciding the comparison and the hidden-intent set decides it.
"""

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.actions import Action
from rl_platform.envs.duel.observation import Obs
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.tactics import (
    View,
    in_hit_line,
    on_stage_after,
    op_busy_frames,
    op_threat,
    recover,
)


def act_answerer(obs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    v = View.of(obs)
    adx, ady = np.abs(v.dx), np.abs(v.dy)
    recovering, recover_action = recover(v)
    side = np.sign(v.dx)
    aim = in_hit_line(v, adx)
    busy = op_busy_frames(v)
    # Punish with what lands before the opponent can act again (startup + the choosing frame).
    grab_busy = aim & v.grounded & (adx < 1.0) & (ady < 0.5) & (busy >= 3)
    heavy_busy = aim & (ady < 1.0) & (adx < 1.8) & (busy >= 6)
    light_busy = aim & (ady < 0.9) & (adx < 1.3) & (busy >= 3)
    blocking = v.op_mode(Mode.BLOCK)
    grab_block = blocking & aim & v.grounded & (adx < 1.0) & (ady < 0.5)
    facing_me = v.op[:, Obs.FACING] * v.dx < 0
    guard = op_threat(v) & (facing_me | (adx < R.BACK_REACH + 0.25))
    block = guard & v.grounded & (adx < 2.4) & (ady < 1.5) & (v.me[:, Obs.SHIELD] > 0.3)
    turn = ~aim & (adx < 2.5)
    # Pressure with lights where the opponent is free but not blocking.
    light = aim & (ady < 0.9) & (adx < 1.3) & ~blocking
    dash = v.grounded & v.facing_opp & (adx > 2.0) & (v.me[:, Obs.DASH_COOLDOWN] == 0)
    dash &= on_stage_after(v, side, R.DASH_SPEED * R.DASH_FRAMES)
    close_in = (adx > 0.8) & on_stage_after(v, side, 0.6)
    conditions = [
        recovering, grab_busy, heavy_busy, light_busy, grab_block, block, turn, light, dash,
        close_in,
    ]  # fmt: skip
    choices = [
        recover_action, Action.GRAB, Action.HEAVY, Action.LIGHT, Action.GRAB, Action.BLOCK,
        v.toward, Action.LIGHT, Action.DASH, v.toward,
    ]  # fmt: skip
    return np.select(conditions, choices, Action.IDLE).astype(np.int64)
