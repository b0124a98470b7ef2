"""The tournament's matchup heat map as a PNG (matplotlib, files only)."""

from pathlib import Path

import numpy as np

from rl_platform.league.leaderboard import MatchupMatrix


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
