"""How much knowing `counter`'s hidden blind spot is worth: win rates split by blind spot.

    uv run python -m benchmarks.duel_counter_blind_spots [--games 200] [--seed 7]

`counter` (rl_platform/envs/duel/counter.py) answers every attack but one per game, its blind
spot. Each row plays `--games` games from each seat against it; a cell is the row agent's win
rate in the games whose blind spot is the column. The probes `opener/ATTACK` always open with
the same attack: the best probe per column is what an agent that knew the blind spot would
score, and a probe's mean is what one fixed guess scores. The scripted styles show what a
policy that never reads `counter`'s history gets. The result goes to docs/duel.md.
"""

import argparse
import time

import numpy as np

from rl_platform.envs.duel.counter import BLIND_SPOTS, make_opener, wins_by_blind_spot
from rl_platform.teachers import get_scripted

SCRIPTED = ("based", "rusher", "blocker", "zoner", "random")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games from each seat")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    start = time.perf_counter()
    agents = {f"opener/{mode.name.lower()}": make_opener(mode) for mode in BLIND_SPOTS}
    agents |= {name: get_scripted("duel", name).build({}) for name in SCRIPTED}
    names = [mode.name.lower() for mode in BLIND_SPOTS]
    print(f"{2 * args.games} games per row ({args.games} from each seat), seed {args.seed}")
    print("cell: the row agent's win rate against `counter` in the games of that blind spot\n")
    print("| agent | " + " | ".join(f"blind spot {n}" for n in names) + " | mean |")
    print("|---" * (len(names) + 2) + "|")
    for name, agent in agents.items():
        wins = wins_by_blind_spot(lambda agent=agent: agent, games=args.games, seed=args.seed)
        cells = [wins[mode] for mode in BLIND_SPOTS]
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {np.mean(cells):.2f} |")
    print(f"\nwall {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
