"""How often duel games end on the clock, with fixed blast lines and with the closing zone.

    uv run python -m benchmarks.duel_time_outs [--games 256] [--seed 0] [--zone 0.5]

Scripted pairs (mirror matches and `based` against each style) play `--games` games each in
the vectorized arena (`envs.duel.arena.run_matches`), once with `zone_closes_at=1.0` (fixed
lines) and once with `--zone`. Prints the share of games that timed out and the share of draws
per pair, as the table in docs/duel.md ("The closing zone").
"""

import argparse

from rl_platform.envs.duel.arena import run_matches
from rl_platform.teachers import get_scripted

PAIRS = (
    ("based", "based"),
    ("rusher", "rusher"),
    ("blocker", "blocker"),
    ("zoner", "zoner"),
    ("based", "rusher"),
    ("based", "zoner"),
)


def shares(a: str, b: str, *, games: int, seed: int, zone: float) -> tuple[float, float]:
    act_a, act_b = (get_scripted("duel", name).build({}) for name in (a, b))
    result = run_matches(act_a, act_b, num_games=games, seed=seed, zone_closes_at=zone)
    return result.timed_out / games, result.draws / games


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--zone", type=float, default=0.5, help="zone_closes_at to compare")
    args = parser.parse_args()
    print(f"| pair | fixed lines: timed out | draws | zone at {args.zone}: timed out | draws |")
    print("|---|---|---|---|---|")
    for a, b in PAIRS:
        fixed = shares(a, b, games=args.games, seed=args.seed, zone=1.0)
        closing = shares(a, b, games=args.games, seed=args.seed, zone=args.zone)
        cells = " | ".join(f"{value:.2f}" for value in (*fixed, *closing))
        print(f"| {a} - {b} | {cells} |")


if __name__ == "__main__":
    main()
