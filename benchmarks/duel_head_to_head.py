"""Two duel policies head to head in the vectorized arena: wins, draws, and games on the clock.

    uv run python benchmarks/duel_head_to_head.py POLICY_A POLICY_B [--games 200] [--seed 0]
        [--zone Z] [--sample]

POLICY_A and POLICY_B are policy URIs (`checkpoint://RUN[/best]`, `scripted://duel/based`,
...). Half of the games seat A first, half second (each half from its own seed), every game to
its end under the duel's defaults plus `zone_closes_at=Z` when given (docs/duel.md, "The closing
zone"). Prints A's wins, draws and losses and the share of games that ended on the clock; the
numbers in docs/league.md ("The reference mix, learned") come from here. The games are
`rlp eval`'s arena games (`rl_platform/evaluation/arena_games.py`): under the same game settings
`rlp eval A --opponent B --seat alternate -n 200` reports the same numbers as rates.
"""

import argparse

from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.evaluation.arena_games import arena_episodes
from rl_platform.evaluation.summary import summarize
from rl_platform.policies.loading import EnvContext, load_policy
from rl_platform.teachers import DUEL_ENV


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
    env = EnvContext(DUEL_ENV, observation_space(), action_space())
    a, b = (load_policy(uri, env=env, sample=args.sample) for uri in (args.policy_a, args.policy_b))
    settings = {} if args.zone is None else {"zone_closes_at": args.zone}
    records = arena_episodes(
        {"a": a, "b": b}, episodes=args.games, seat="alternate", seed=args.seed, env_kwargs=settings
    )
    summary = summarize(records, "a")
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
