"""Struct-of-arrays state for N games: every per-player field has shape (N, 2).

Keeping one array per field (rather than one object per game) is what lets a single `step`
advance all games with a handful of numpy operations.
"""

from dataclasses import dataclass, fields

import numpy as np

from rl_platform.envs.duel.rules import HP_MAX, MAX_JUMPS, MODE_FREE, SPAWN_X

# Player 0 starts on the left facing right, player 1 on the right facing left.
_SPAWN_SIDE = np.array([-1.0, 1.0], dtype=np.float32)


@dataclass
class DuelState:
    """Mutable arrays for N games; `t`, `done` and `winner` are per game (N,)."""

    x: np.ndarray
    y: np.ndarray
    vx: np.ndarray
    vy: np.ndarray
    hp: np.ndarray
    facing: np.ndarray
    shield: np.ndarray
    draw: np.ndarray
    """Each player's private per-game draw in [0, 1) (observation.Obs.PRIVATE_DRAW)."""
    stocks: np.ndarray
    mode: np.ndarray
    timer: np.ndarray
    """Frames since the current mode began."""
    stun: np.ndarray
    """Frames left in HITSTUN/STUNNED."""
    invuln: np.ndarray
    dash_cd: np.ndarray
    jump_cd: np.ndarray
    drop: np.ndarray
    """Frames during which soft platforms are ignored (dropping through)."""
    jumps: np.ndarray
    on_ground: np.ndarray
    air_dash: np.ndarray
    fast_fall: np.ndarray
    hit_done: np.ndarray
    """The current attack already connected (one hit per attack)."""
    t: np.ndarray
    done: np.ndarray
    winner: np.ndarray
    """-1 while running, 0/1 for the winning player, 2 for a draw."""

    @classmethod
    def allocate(cls, num_games: int) -> "DuelState":
        shape = (num_games, 2)
        floats = ("x", "y", "vx", "vy", "hp", "facing", "shield", "draw")
        ints = ("stocks", "mode", "timer", "stun", "invuln", "dash_cd", "jump_cd", "drop", "jumps")
        bools = ("on_ground", "air_dash", "fast_fall", "hit_done")
        arrays = {name: np.zeros(shape, np.float32) for name in floats}
        arrays |= {name: np.zeros(shape, np.int32) for name in ints}
        arrays |= {name: np.zeros(shape, bool) for name in bools}
        arrays |= {
            "t": np.zeros(num_games, np.int32),
            "done": np.zeros(num_games, bool),
            "winner": np.full(num_games, -1, np.int8),
        }
        return cls(**arrays)

    @property
    def num_games(self) -> int:
        return self.x.shape[0]

    def take(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Copy the given games' fields (used to keep finished games frozen)."""
        return {f.name: getattr(self, f.name)[rows].copy() for f in fields(self)}

    def put(self, rows: np.ndarray, saved: dict[str, np.ndarray]) -> None:
        for name, values in saved.items():
            getattr(self, name)[rows] = values


def respawn(state: DuelState, mask: np.ndarray, spawn_x: np.ndarray | float = SPAWN_X) -> None:
    """Put the masked players (N, 2) back at their spawn with full HP; stocks are kept.
    `spawn_x` is the distance from the centre, a number or one per game (N, 1)."""
    state.x[mask] = np.broadcast_to(_SPAWN_SIDE * spawn_x, mask.shape)[mask]
    state.facing[mask] = np.broadcast_to(-_SPAWN_SIDE, mask.shape)[mask]
    for name in ("y", "vx", "vy"):
        getattr(state, name)[mask] = 0.0
    state.hp[mask] = HP_MAX
    state.shield[mask] = 1.0
    state.mode[mask] = MODE_FREE
    for name in ("timer", "stun", "dash_cd", "jump_cd", "drop"):
        getattr(state, name)[mask] = 0
    state.jumps[mask] = MAX_JUMPS
    state.on_ground[mask] = True
    state.air_dash[mask] = True
    state.fast_fall[mask] = False
    state.hit_done[mask] = False


def reset_games(
    state: DuelState, games: np.ndarray, *, stocks: int, jitter: float, rng: np.random.Generator
) -> None:
    """Start new games in the rows selected by the boolean mask `games` (N,)."""
    mask = np.zeros(state.x.shape, bool)
    mask[games] = True
    respawn(state, mask)
    count = int(games.sum())
    if jitter > 0 and count:
        noise = rng.uniform(-jitter, jitter, size=(count, 2)).astype(np.float32)
        state.x[games] += noise
    state.stocks[games] = stocks
    state.invuln[games] = 0
    state.t[games] = 0
    state.done[games] = False
    state.winner[games] = -1
