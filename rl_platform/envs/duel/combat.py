"""Shields, hits (with blocking, chip damage and knockback) and knockouts for all games.

Hits of both players are computed from the same pre-hit state, so simultaneous hits trade.
Arrays indexed `[:, ::-1]` give "the other player" for each entry without copying.
"""

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.state import DuelState, respawn


def update_shields(s: DuelState) -> None:
    """Blocking drains the shield, anything else regenerates it."""
    blocking = s.mode == R.MODE_BLOCK
    s.shield += np.where(blocking, -R.SHIELD_DRAIN_PER_FRAME, R.SHIELD_REGEN_PER_FRAME)
    np.clip(s.shield, 0.0, 1.0, out=s.shield)


def resolve_hits(s: DuelState) -> np.ndarray:
    """Apply this frame's hits; returns the damage each player took, shape (N, 2)."""
    mode, timer = s.mode, s.timer
    active = (timer >= R.ATTACK_STARTUP[mode]) & (timer < R.ATTACK_ACTIVE_END[mode])
    active &= ~s.hit_done
    if not active.any():
        _break_shields(s)
        return np.zeros(s.hp.shape, np.float32)
    other_x, other_y = s.x[:, ::-1], s.y[:, ::-1]
    forward = (other_x - s.x) * s.facing
    hit = (
        active
        & (forward >= -R.BACK_REACH)
        & (forward <= R.ATTACK_REACH[mode])
        & (np.abs(other_y - s.y) <= R.ATTACK_VERTICAL_REACH[mode])
        & (s.invuln[:, ::-1] == 0)
    )
    s.hit_done |= hit
    # From here on everything is from the defender's side: row entry p was hit by 1 - p.
    taken = hit[:, ::-1]
    attacker_mode = mode[:, ::-1].copy()
    attacker_facing = s.facing[:, ::-1].copy()
    facing_attacker = (other_x - s.x) * s.facing >= 0.0
    blocked = taken & (mode == R.MODE_BLOCK) & (attacker_mode != R.MODE_GRAB) & facing_attacker
    clean = taken & ~blocked
    base_damage = R.ATTACK_DAMAGE[attacker_mode] * taken
    damage = np.where(blocked, base_damage * R.CHIP_FRACTION, base_damage)
    s.hp -= damage
    s.shield -= blocked * (base_damage * R.SHIELD_COST_PER_DAMAGE)
    np.copyto(s.vx, attacker_facing * R.BLOCK_PUSHBACK, where=blocked)
    _knock_back(s, clean, attacker_mode, attacker_facing)
    _break_shields(s)
    return damage


def _knock_back(
    s: DuelState, clean: np.ndarray, attacker_mode: np.ndarray, attacker_facing: np.ndarray
) -> None:
    """Launch cleanly hit players; the lower their HP, the faster they fly."""
    if not clean.any():
        return
    missing = np.clip(1.0 - s.hp / R.HP_MAX, 0.0, 1.0)
    speed = R.KNOCKBACK_BASE[attacker_mode] + R.KNOCKBACK_GROWTH[attacker_mode] * missing
    np.copyto(s.vx, attacker_facing * speed * R.KNOCKBACK_COS[attacker_mode], where=clean)
    np.copyto(s.vy, speed * R.KNOCKBACK_SIN[attacker_mode], where=clean)
    stun = (R.HITSTUN_BASE + R.HITSTUN_PER_SPEED * speed).astype(np.int32)
    _lock(s, clean, R.MODE_HITSTUN, stun)
    s.on_ground &= ~clean
    s.fast_fall &= ~clean


def _break_shields(s: DuelState) -> None:
    broken = (s.mode == R.MODE_BLOCK) & (s.shield <= 0.0)
    if broken.any():
        _lock(s, broken, R.MODE_STUNNED, R.SHIELD_BREAK_FRAMES)
        np.copyto(s.shield, 0.0, where=broken)


def _lock(s: DuelState, mask: np.ndarray, mode: int, frames: np.ndarray | int) -> None:
    np.copyto(s.mode, mode, where=mask)
    np.copyto(s.stun, frames, where=mask)
    np.copyto(s.timer, 0, where=mask)


def knockouts(s: DuelState, zone_x: np.ndarray | float = R.BLAST_X) -> np.ndarray:
    """Players past a blast line or at 0 HP lose a stock and respawn; returns the mask.
    `zone_x` is the side blast line, a number or one per game (N, 1) while the zone closes."""
    ko = (np.abs(s.x) > zone_x) | (s.y < R.BLAST_BOTTOM) | (s.y > R.BLAST_TOP) | (s.hp <= 0.0)
    if ko.any():
        s.stocks -= ko
        respawn(s, ko, np.minimum(R.SPAWN_X, R.ZONE_RESPAWN_FRACTION * zone_x))
        np.copyto(s.invuln, R.RESPAWN_INVULN, where=ko)
    return ko
