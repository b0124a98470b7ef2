"""Cross table of the scripted duel agents: every pair plays, seats alternating.

    uv run python -m benchmarks.duel_styles_table [--games 200] [--seed 0] [--agents NAME ...]

Each pair (a mirror match too) plays `--games` games in the vectorized arena
(`envs.duel.arena.run_matches`, default game settings): half with the row agent as player 0,
half as player 1, each half from its own seed. A cell is the row agent's win rate against the
column agent in percent, with the draw rate in brackets when there were draws; the two cells
of a pair come from the same games. The result goes to docs/duel.md ("Scripted styles").
"""

import argparse
import time
from itertools import combinations_with_replacement

from rl_platform.envs.duel.arena import run_matches
from rl_platform.teachers import get_scripted

DEFAULT_AGENTS = ("based", "rusher", "blocker", "zoner", "constant", "random")
Tally = dict[tuple[str, str], tuple[int, int, int]]
"""(row, column) -> (row wins, column wins, draws)."""


def play_pairs(agents: list[str], *, games: int, seed: int) -> Tally:
    acts = {name: get_scripted("duel", name).build({}) for name in agents}
    tally: Tally = {}
    for index, (a, b) in enumerate(combinations_with_replacement(agents, 2)):
        pair_seed = seed + 2 * index
        first = run_matches(acts[a], acts[b], num_games=games // 2, seed=pair_seed)
        second = run_matches(acts[b], acts[a], num_games=games - games // 2, seed=pair_seed + 1)
        wins_a, wins_b = first.wins_a + second.wins_b, first.wins_b + second.wins_a
        draws = first.draws + second.draws
        tally[a, b], tally[b, a] = (wins_a, wins_b, draws), (wins_b, wins_a, draws)
    return tally


def markdown_table(agents: list[str], tally: Tally) -> str:
    def cell(row: str, column: str) -> str:
        wins, losses, draws = tally[row, column]
        games = wins + losses + draws
        text, draw_rate = f"{100 * wins / games:.0f}", 100 * draws / games
        if not draws:
            return text
        return f"{text} ({draw_rate:.0f})" if draw_rate >= 1 else f"{text} (<1)"

    lines = ["| row vs column | " + " | ".join(agents) + " |", "|---" * (len(agents) + 1) + "|"]
    lines += [f"| {row} | " + " | ".join(cell(row, col) for col in agents) + " |" for row in agents]
    return "\n".join(lines)


def beats(agents: list[str], tally: Tally) -> list[str]:
    """One line per agent: the agents it wins more games against than it loses."""
    lines = []
    for row in agents:
        beaten = [col for col in agents if col != row and tally[row, col][0] > tally[row, col][1]]
        lines.append(f"{row} beats: {', '.join(beaten) or '-'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games per pair")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS))
    args = parser.parse_args()
    start = time.perf_counter()
    tally = play_pairs(args.agents, games=args.games, seed=args.seed)
    print(f"{args.games} games per pair, seats alternating, seed {args.seed}")
    print("cell: row's win rate in % (draw rate in % when there were draws)\n")
    print(markdown_table(args.agents, tally))
    print("\n" + "\n".join(beats(args.agents, tally)))
    print(f"\nwall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
