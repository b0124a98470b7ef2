"""Rules of the duel game: stage geometry, physics constants, character modes and attacks.

Units are stage units and frames (20 frames per second); speeds are units per frame. The
character is a point at its feet; attacks reach `reach` units in front of it.
"""

from enum import IntEnum

import numpy as np

FPS = 20
DEFAULT_MAX_STEPS = 60 * FPS
DEFAULT_STOCKS = 3
HP_MAX = 100.0

# Main stage: a solid block with its top at y=0 between the two ledges.
STAGE_HALF_WIDTH = 6.0
STAGE_DEPTH = 3.0
# Two floating soft platforms, mirror images at |x| in [inner, outer] (land from above, pass
# through from below, drop with DOWN); the symmetry lets one |x| test cover both.
PLATFORM_Y = 3.0
PLATFORM_INNER = 1.5
PLATFORM_OUTER = 4.5
# Leaving this box loses a stock.
BLAST_X = 13.0
BLAST_BOTTOM = -8.0
BLAST_TOP = 16.0
# A free airborne character inside this box next to a ledge climbs onto the stage.
LEDGE_REACH = 0.8
LEDGE_DEPTH = 1.2
LEDGE_CLIMB_INSET = 0.4
SPAWN_X = 3.0
# The closing zone (`DuelConfig.zone_closes_at`): the side blast lines move in linearly to
# +-ZONE_END_X at the time limit, so two players who keep their distance are pushed within
# reach of each other (attacks reach 1.1-1.9 forward and 0.3 behind) before the clock ends.
ZONE_END_X = 0.6
# A player who loses a stock respawns this far inside the zone (never outside its blast line).
ZONE_RESPAWN_FRACTION = 0.8

GRAVITY = 0.05
JUMP_SPEED = 0.6
AIR_JUMP_SPEED = 0.55
MAX_JUMPS = 2
JUMP_COOLDOWN = 4
MAX_FALL_SPEED = 0.7
FAST_FALL_SPEED = 1.0
WALK_SPEED = 0.3
AIR_SPEED = 0.25
AIR_ACCEL = 0.04
GROUND_FRICTION = 0.5
KNOCKBACK_DRAG = 0.9
MAX_SPEED = 3.0
DASH_SPEED = 0.8
DASH_FRAMES = 3
DASH_COOLDOWN = 12
DROP_FRAMES = 4

# Hitboxes also reach a little behind the attacker so point-blank overlaps still connect.
BACK_REACH = 0.3
CHIP_FRACTION = 0.25
SHIELD_DRAIN_PER_FRAME = 0.01
SHIELD_REGEN_PER_FRAME = 0.004
SHIELD_COST_PER_DAMAGE = 0.02
SHIELD_BREAK_FRAMES = 30
BLOCK_PUSHBACK = 0.25
HITSTUN_BASE = 4
HITSTUN_PER_SPEED = 12.0
RESPAWN_INVULN = 30


class Mode(IntEnum):
    """What a character is doing; FREE is the only mode that accepts new inputs."""

    FREE = 0
    DASH = 1
    LIGHT = 2
    HEAVY = 3
    GRAB = 4
    BLOCK = 5
    HITSTUN = 6
    STUNNED = 7
    """Shield broken: cannot act and takes full hits."""


NUM_MODES = len(Mode)
# Plain-int copies for the per-frame hot path: IntEnum attribute access costs about a
# microsecond each on Python 3.11, which adds up to a third of a single-game step.
MODE_FREE, MODE_DASH, MODE_LIGHT, MODE_HEAVY, MODE_GRAB, MODE_BLOCK, MODE_HITSTUN, MODE_STUNNED = (
    int(mode) for mode in Mode
)


def _mode_table(light: float, heavy: float, grab: float, dtype: type = np.float32) -> np.ndarray:
    """A per-mode lookup row; non-attack modes get 0 so lookups need no masking."""
    table = np.zeros(NUM_MODES, dtype=dtype)
    table[Mode.LIGHT], table[Mode.HEAVY], table[Mode.GRAB] = light, heavy, grab
    return table


# Frame data: an attack is active for timer in [startup, startup + active) and returns the
# character to FREE at timer == startup + active + recovery.
ATTACK_STARTUP = _mode_table(2, 5, 2, np.int32)
ATTACK_ACTIVE = _mode_table(2, 2, 2, np.int32)
ATTACK_RECOVERY = _mode_table(3, 7, 8, np.int32)
ATTACK_TOTAL = ATTACK_STARTUP + ATTACK_ACTIVE + ATTACK_RECOVERY
ATTACK_ACTIVE_END = ATTACK_STARTUP + ATTACK_ACTIVE
ATTACK_REACH = _mode_table(1.4, 1.9, 1.1)
ATTACK_VERTICAL_REACH = _mode_table(1.0, 1.2, 0.6)
ATTACK_DAMAGE = _mode_table(5.0, 14.0, 8.0)
KNOCKBACK_BASE = _mode_table(0.25, 0.5, 0.45)
KNOCKBACK_GROWTH = _mode_table(0.45, 1.2, 0.7)
_ANGLES = np.deg2rad(_mode_table(25.0, 40.0, 30.0))
KNOCKBACK_COS = np.cos(_ANGLES).astype(np.float32)
KNOCKBACK_SIN = np.sin(_ANGLES).astype(np.float32)
IS_ATTACK = _mode_table(1, 1, 1, bool)

# Longest timers, used to normalise observations into [0, 1].
MAX_STUN_FRAMES = max(SHIELD_BREAK_FRAMES, HITSTUN_BASE + int(HITSTUN_PER_SPEED * 2) + 1)
MAX_PHASE_FRAMES = 10
MODE_TIMER_SCALE = 20
