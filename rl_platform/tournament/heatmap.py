"""The tournament's matchup heat map as a PNG (matplotlib, files only)."""

import os
from pathlib import Path

import numpy as np

from rl_platform.base.errors import UserError
from rl_platform.league.leaderboard import MatchupMatrix

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def check_figure_path(path: Path, *, option: str) -> None:
    """A file matplotlib can write: a known format, not a folder, in a writable folder (or one
    that can be made). Checked before the work whose result it holds."""
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise UserError(f"{option} {path}: use a {', '.join(FIGURE_SUFFIXES)} file name")
    if path.is_dir():
        raise UserError(f"{option} {path}: is a folder; name the image file to write")
    folder = next((p for p in path.absolute().parents if p.exists()), Path("/"))
    if not folder.is_dir():
        raise UserError(f"{option} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(f"{option} {path}: {folder} is not writable; choose another path")


def write_heatmap(matrix: MatchupMatrix, path: Path, *, title: str = "") -> Path:
    """PNG of row-vs-column score (draw = 1/2), annotated, NaN where a pair never played."""
    import matplotlib

    matplotlib.use("Agg")  # files only; never needs a display
    import matplotlib.pyplot as plt

    scores = matrix.win_rate()
    n = len(matrix.ids)
    size = max(4.0, 0.6 * n + 2.0)
    fig, ax = plt.subplots(figsize=(size, size * 0.85))
    image = ax.imshow(np.ma.masked_invalid(scores), cmap="RdYlGn", vmin=0.0, vmax=1.0)
    ax.set_xticks(range(n), matrix.ids, rotation=45, ha="right")
    ax.set_yticks(range(n), matrix.ids)
    ax.set_xlabel("opponent")
    ax.set_ylabel("player (row score vs column)")
    if n <= 20:  # numbers become unreadable beyond that
        for i in range(n):
            for j in range(n):
                if np.isfinite(scores[i, j]):
                    ax.text(j, i, f"{scores[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label="score (win = 1, draw = 1/2)")
    ax.set_title(title or "league matchups")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
