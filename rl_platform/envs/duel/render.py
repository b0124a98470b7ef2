"""Renderers for one game of a `DuelState`: a small RGB frame (numpy only) and ANSI text."""

import numpy as np

from rl_platform.envs.duel import rules as R
from rl_platform.envs.duel.core import DuelCore
from rl_platform.envs.duel.rules import Mode
from rl_platform.envs.duel.state import DuelState

FRAME_HEIGHT, FRAME_WIDTH = 128, 256
_WORLD_LEFT, _WORLD_RIGHT = -R.BLAST_X, R.BLAST_X
_WORLD_TOP, _WORLD_BOTTOM = R.BLAST_TOP - 4.0, R.BLAST_BOTTOM
_SKY = (24, 26, 38)
_STAGE = (120, 120, 130)
_PLATFORM = (170, 130, 80)
_PLAYER_COLORS = ((220, 70, 60), (70, 130, 230))
_HITBOX = (250, 220, 60)
_SHIELD = (120, 230, 230)
_HP_BACK = (60, 60, 60)
_TIME_BAR = (90, 90, 110)
_ZONE = (200, 40, 120)
_BODY_HALF_WIDTH, _BODY_HEIGHT = 0.4, 1.6
_MODE_NAMES = {mode: mode.name for mode in Mode}


def _col(x: float, width: int = FRAME_WIDTH) -> int:
    frac = (x - _WORLD_LEFT) / (_WORLD_RIGHT - _WORLD_LEFT)
    return int(np.clip(round(frac * (width - 1)), 0, width - 1))


def _row(y: float, height: int = FRAME_HEIGHT) -> int:
    frac = (_WORLD_TOP - y) / (_WORLD_TOP - _WORLD_BOTTOM)
    return int(np.clip(round(frac * (height - 1)), 0, height - 1))


def _fill(frame: np.ndarray, x0: float, x1: float, y0: float, y1: float, color: tuple) -> None:
    """Fill the world-space box [x0, x1] x [y0, y1] (at least one pixel)."""
    r0, r1 = _row(max(y0, y1)), _row(min(y0, y1))
    c0, c1 = _col(min(x0, x1)), _col(max(x0, x1))
    frame[r0 : r1 + 1, c0 : c1 + 1] = color


def render_game(core: DuelCore, mode: str, game: int = 0) -> np.ndarray | str:
    """One game of `core` as an `rgb_array` frame or `ansi` text, with the closing zone's side
    lines drawn once they have moved in from the blast lines."""
    zone = core.zone_x()
    zone_x = float(zone) if np.isscalar(zone) else float(zone[game, 0])
    closing = zone_x if zone_x < R.BLAST_X else None
    max_steps = core.config.max_steps
    if mode == "rgb_array":
        return render_rgb(core.state, game, max_steps=max_steps, zone_x=closing)
    return render_ansi(core.state, game, max_steps=max_steps, zone_x=closing)


def render_rgb(
    s: DuelState, game: int = 0, *, max_steps: int | None = None, zone_x: float | None = None
) -> np.ndarray:
    """A 128x256x3 uint8 frame: stage, platforms, players, active hitboxes, HP, stocks,
    (given `max_steps`) a time-left bar along the bottom and (given `zone_x`) the closing
    zone's side lines at +-zone_x."""
    frame = np.empty((FRAME_HEIGHT, FRAME_WIDTH, 3), np.uint8)
    frame[:] = _SKY
    if zone_x is not None:
        for side in (-1.0, 1.0):
            column = _col(side * zone_x)
            frame[:, column] = _ZONE
    _fill(frame, -R.STAGE_HALF_WIDTH, R.STAGE_HALF_WIDTH, 0.0, -R.STAGE_DEPTH, _STAGE)
    for side in (-1.0, 1.0):
        inner, outer = side * R.PLATFORM_INNER, side * R.PLATFORM_OUTER
        _fill(frame, inner, outer, R.PLATFORM_Y, R.PLATFORM_Y - 0.2, _PLATFORM)
    for p in range(2):
        _draw_player(frame, s, game, p)
    _draw_hud(frame, s, game, max_steps)
    return frame


def _draw_player(frame: np.ndarray, s: DuelState, game: int, p: int) -> None:
    x, y = float(s.x[game, p]), float(s.y[game, p])
    mode, timer = Mode(int(s.mode[game, p])), int(s.timer[game, p])
    color = np.array(_PLAYER_COLORS[p], np.float32)
    if mode in (Mode.HITSTUN, Mode.STUNNED):
        color *= 0.5
    if s.invuln[game, p] > 0 and s.invuln[game, p] % 4 < 2:
        color = (color + 255.0) / 2.0  # blink while invulnerable
    if mode == Mode.BLOCK:
        pad = 0.25
        _fill(frame, x - _BODY_HALF_WIDTH - pad, x + _BODY_HALF_WIDTH + pad, y, y + 2.0, _SHIELD)
    _fill(frame, x - _BODY_HALF_WIDTH, x + _BODY_HALF_WIDTH, y, y + _BODY_HEIGHT, tuple(color))
    facing = float(s.facing[game, p])
    eye_x = x + facing * 0.25
    _fill(frame, eye_x, eye_x, y + 1.3, y + 1.3, (255, 255, 255))
    if R.ATTACK_STARTUP[mode] <= timer < R.ATTACK_ACTIVE_END[mode]:
        reach = float(R.ATTACK_REACH[mode])
        _fill(frame, x, x + facing * reach, y + 0.6, y + 1.0, _HITBOX)


def _draw_hud(frame: np.ndarray, s: DuelState, game: int, max_steps: int | None) -> None:
    bar = 100
    for p in range(2):
        c0 = 4 if p == 0 else FRAME_WIDTH - 4 - bar
        hp = max(0.0, float(s.hp[game, p])) / R.HP_MAX
        frame[3:7, c0 : c0 + bar] = _HP_BACK
        filled = round(hp * bar)
        if p == 0:
            frame[3:7, c0 : c0 + filled] = _PLAYER_COLORS[p]
        else:
            frame[3:7, c0 + bar - filled : c0 + bar] = _PLAYER_COLORS[p]
        for k in range(int(s.stocks[game, p])):
            offset = 4 * k if p == 0 else bar - 3 - 4 * k
            frame[9:12, c0 + offset : c0 + offset + 3] = _PLAYER_COLORS[p]
    if max_steps:
        left = max(0.0, 1.0 - float(s.t[game]) / max_steps)
        frame[FRAME_HEIGHT - 3 :, : round(left * FRAME_WIDTH)] = _TIME_BAR


def render_ansi(
    s: DuelState, game: int = 0, *, max_steps: int, width: int = 64, zone_x: float | None = None
) -> str:
    """A text picture of the stage (with the closing zone's lines as `|` given `zone_x`) plus
    one status line per player."""
    height = 18
    grid = [[" "] * width for _ in range(height)]

    def put(x: float, y: float, char: str) -> None:
        r, c = _row(y, height), _col(x, width)
        grid[r][c] = char

    if zone_x is not None:
        for row in grid:
            row[_col(-zone_x, width)] = row[_col(zone_x, width)] = "|"
    for xi in np.linspace(-R.STAGE_HALF_WIDTH, R.STAGE_HALF_WIDTH, width):
        if abs(xi) <= R.STAGE_HALF_WIDTH:
            put(float(xi), -0.5, "#")
    for xi in np.linspace(-R.PLATFORM_OUTER, R.PLATFORM_OUTER, width):
        if R.PLATFORM_INNER <= abs(xi) <= R.PLATFORM_OUTER:
            put(float(xi), R.PLATFORM_Y - 0.5, "=")
    for p in range(2):
        x, y = float(s.x[game, p]), float(s.y[game, p])
        mode, timer = Mode(int(s.mode[game, p])), int(s.timer[game, p])
        if R.ATTACK_STARTUP[mode] <= timer < R.ATTACK_ACTIVE_END[mode]:
            put(x + float(s.facing[game, p]) * float(R.ATTACK_REACH[mode]), y + 0.8, "*")
        r, c = _row(y + 0.8, height), _col(x, width)
        # Overlapping players share a cell: mark it so neither silently disappears.
        grid[r][c] = "X" if grid[r][c] == "0" else str(p)
    lines = ["".join(row) for row in grid]
    zone = "" if zone_x is None else f" zone=+-{zone_x:.1f}"
    lines.append(f"t={int(s.t[game])}/{max_steps}{zone}")
    for p in range(2):
        mode = _MODE_NAMES[Mode(int(s.mode[game, p]))]
        lines.append(
            f"player_{p}: hp={float(s.hp[game, p]):5.1f} stocks={int(s.stocks[game, p])} "
            f"shield={float(s.shield[game, p]):.2f} mode={mode} "
            f"pos=({float(s.x[game, p]):+.1f},{float(s.y[game, p]):+.1f})"
        )
    return "\n".join(lines)
