"""The connect-four board: its size and its winning lines (pure numpy).

The game (`vector_game.py`) and the scripted opponents that read its boards
(`rl_platform.teachers.connect_four`) share them; the game owns them, so it never imports a
teacher.
"""

import itertools

import numpy as np

ROWS, COLS = 6, 7


def _winning_lines() -> np.ndarray:
    """All 69 lines of four cells as flat indices into a 6x7 board, shape [69, 4]."""
    lines = []
    for r, c in itertools.product(range(ROWS), range(COLS)):
        for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
            cells = [(r + i * dr, c + i * dc) for i in range(4)]
            if all(0 <= rr < ROWS and 0 <= cc < COLS for rr, cc in cells):
                lines.append([rr * COLS + cc for rr, cc in cells])
    return np.asarray(lines, dtype=np.int64)


LINES = _winning_lines()
"""[69, 4] flat cell indices of every line of four."""
