"""The memoryless ceiling of the hidden-intent opponents: what no policy without memory beats.

    uv run python -m benchmarks.duel_hidden_intent [--games 200] [--seed 7]

`counter` hides a per-game blind spot and `shifter` a per-game plan (rusher, blocker or
zoner); neither shows it in the frame the learner sees. Each fixed responder (the scripted
styles, and `counter`'s probes that always open with one attack) plays `--games` games from
each seat against each, split by the hidden value. Two numbers per opponent come out:

* the **memoryless ceiling**: the best fixed responder's mean over the hidden values, what a
  policy that answers every game the same way reaches (issue #43 reads every learned policy's
  win rate against it);
* **knowing the intent**: the mean over hidden values of the best responder for each, what a
  policy that told the hidden value from the history and then answered could reach.

The gap between them is what memory can be worth against that opponent.
"""

import argparse
import time

import numpy as np

from benchmarks.common import machine_line
from benchmarks.common.hidden_intent import SPLITS as OPPONENTS
from benchmarks.common.hidden_intent import Split
from rl_platform.envs.duel.counter import BLIND_SPOTS, make_opener
from rl_platform.envs.duel.scripted import ActFn
from rl_platform.teachers import get_scripted

SCRIPTED = ("based", "rusher", "blocker", "zoner", "answerer", "counter", "shifter", "random")


def responders() -> dict[str, ActFn]:
    agents = {name: get_scripted("duel", name).build({}) for name in SCRIPTED}
    agents |= {f"opener/{mode.name.lower()}": make_opener(mode) for mode in BLIND_SPOTS}
    return agents


def table_for(split: Split, *, games: int, seed: int) -> dict[str, dict[str, float]]:
    return {
        name: split(lambda agent=agent: agent, games=games, seed=seed)
        for name, agent in responders().items()
    }


def bounds_of(table: dict[str, dict[str, float]]) -> tuple[float, float]:
    """(memoryless ceiling, knowing the intent) of one opponent's responder table."""
    columns = list(next(iter(table.values())))
    ceiling = max(float(np.mean(list(row.values()))) for row in table.values())
    knowing = float(np.mean([max(row[c] for row in table.values()) for c in columns]))
    return ceiling, knowing


def memoryless_bounds(*, games: int, seed: int) -> dict[str, tuple[float, float]]:
    """(memoryless ceiling, knowing the intent) against each hidden-intent opponent, unprinted
    (`benchmarks/opponent_encoder_value.py` reads its results against them)."""
    return {
        opponent: bounds_of(table_for(split, games=games, seed=seed))
        for opponent, split in OPPONENTS.items()
    }


def print_table(opponent: str, table: dict[str, dict[str, float]]) -> tuple[float, float]:
    columns = list(next(iter(table.values())))
    print(f"\n### against `{opponent}` (cell: the row's win rate in games of that hidden value)\n")
    print("| responder | " + " | ".join(columns) + " | mean |")
    print("|---" * (len(columns) + 2) + "|")
    for name, row in table.items():
        cells = [row[c] for c in columns]
        print(f"| {name} | " + " | ".join(f"{c:.2f}" for c in cells) + f" | {np.mean(cells):.2f} |")
    return bounds_of(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="games from each seat")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    start = time.perf_counter()
    print(machine_line())
    bounds = {}
    for opponent, split in OPPONENTS.items():
        table = table_for(split, games=args.games, seed=args.seed)
        bounds[opponent] = print_table(opponent, table)
    print("\n| opponent | memoryless ceiling | knowing the intent | what memory can add |")
    print("|---|---|---|---|")
    for opponent, (ceiling, knowing) in bounds.items():
        print(f"| {opponent} | {ceiling:.2f} | {knowing:.2f} | {knowing - ceiling:+.2f} |")
    print(
        f"\n{2 * args.games} games per cell, seed {args.seed}, {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
