"""The 10 discrete actions of the duel game and their egocentric mirroring.

Actions are egocentric: each agent acts in its own (possibly mirrored) frame, the same frame
its observation uses. For `player_1` the world is mirrored, so its LEFT moves it towards world
+x. That way one policy can play either side with identical meaning of inputs.
"""

from enum import IntEnum

import numpy as np


class Action(IntEnum):
    """Discrete inputs; one per agent per frame (20 frames per second of game time)."""

    IDLE = 0
    LEFT = 1
    """Walk (ground) or drift (air) left and face left."""
    RIGHT = 2
    """Walk (ground) or drift (air) right and face right."""
    JUMP = 3
    """Jump from the ground or use the air jump (2 jumps until landing)."""
    DASH = 4
    """Burst of speed in the facing direction; once per airtime in the air (recovery tool)."""
    LIGHT = 5
    """Fast, short-range attack: little damage and knockback."""
    HEAVY = 6
    """Slow, long-range attack: big damage and knockback that grows as the target's HP drops."""
    BLOCK = 7
    """Hold to block (ground only): hits from the front deal chip damage and drain the shield."""
    DOWN = 8
    """Fast-fall in the air, drop through a floating platform when standing on one."""
    GRAB = 9
    """Short-range throw on the ground that goes through blocks; long whiff recovery."""


NUM_ACTIONS = len(Action)
ACTION_NAMES = tuple(action.name.lower() for action in Action)
"""Metric names of the actions (`actions/jump_frac`), in index order."""
# Plain-int copies for hot loops (IntEnum attribute access is slow on Python 3.11).
ACT_IDLE, ACT_LEFT, ACT_RIGHT, ACT_JUMP, ACT_DASH = (int(a) for a in list(Action)[:5])
ACT_LIGHT, ACT_HEAVY, ACT_BLOCK, ACT_DOWN, ACT_GRAB = (int(a) for a in list(Action)[5:])

# Maps an egocentric action to the world action for a mirrored agent (swap LEFT/RIGHT).
MIRROR_ACTION = np.arange(NUM_ACTIONS, dtype=np.int64)
MIRROR_ACTION[Action.LEFT] = Action.RIGHT
MIRROR_ACTION[Action.RIGHT] = Action.LEFT
