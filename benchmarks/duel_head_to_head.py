"""Two duel policies head to head in the vectorized arena: wins, draws, and games on the clock.

    uv run python -m benchmarks.duel_head_to_head POLICY_A POLICY_B [--games 200] [--seed 0]
        [--zone Z] [--sample]

POLICY_A and POLICY_B are policy URIs (`checkpoint://RUN[/best]`, `scripted://duel/based`,
...). Half of the games seat A first, half second (each half from its own seed), every game to
its end under the duel's defaults plus `zone_closes_at=Z` when given (docs/duel.md, "The closing
zone"). Prints A's wins, draws and losses and the share of games that ended on the clock; the
numbers in docs/league.md ("The reference mix, learned") come from here. The games are
`rlp eval`'s arena games (benchmarks/common/arena.py): under the same game settings
`rlp eval A --opponent B --seat alternate -n 200` reports the same numbers as rates.
"""

import argparse

from benchmarks.common.arena import duel_policy, play


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("policy_a")
    parser.add_argument("policy_b")
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--zone", type=float, default=None, help="zone_closes_at (default: off)")
    parser.add_argument("--sample", action="store_true", help="sampled instead of greedy actions")
    args = parser.parse_args()
    a, b = (duel_policy(uri, sample=args.sample) for uri in (args.policy_a, args.policy_b))
    settings = {} if args.zone is None else {"zone_closes_at": args.zone}
    summary = play(a, b, games=args.games, seed=args.seed, env_kwargs=settings)
    wins, draws, losses = (
        round(summary[f"{o}_rate"] * args.games) for o in ("win", "draw", "loss")
    )
    print(
        f"A wins {wins}, draws {draws}, losses {losses} of {args.games} "
        f"(A's score {(wins + draws / 2) / args.games:.3f}); "
        f"on the clock {summary['timed_out_rate']:.2f}, "
        f"mean length {summary['length_mean']:.0f} frames"
    )


if __name__ == "__main__":
    main()
