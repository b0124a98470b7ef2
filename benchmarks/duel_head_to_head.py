"""Two duel policies head to head in the vectorized arena: wins, draws, and games on the clock.

    uv run python benchmarks/duel_head_to_head.py POLICY_A POLICY_B [--games 200] [--seed 0]
        [--zone Z] [--sample]

POLICY_A and POLICY_B are policy URIs (`checkpoint://RUN[/best]`, `scripted://duel/based`,
...). Half of the games seat A first, half second (each half from its own seed), every game to
its end under the duel's defaults plus `zone_closes_at=Z` when given (docs/duel.md, "The closing
zone"). Prints A's wins, draws and losses and the share of games that ended on the clock; the
numbers in docs/league.md ("The reference mix, learned") come from here.
"""

import argparse

import torch

from rl_platform.envs.duel.arena import run_matches
from rl_platform.envs.duel.pettingzoo_env import action_space, observation_space
from rl_platform.evaluation.arena_games import ArenaSeat
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
    torch.manual_seed(args.seed)
    env = EnvContext(DUEL_ENV, observation_space(), action_space())
    a, b = (load_policy(uri, env=env, sample=args.sample) for uri in (args.policy_a, args.policy_b))
    kwargs = {} if args.zone is None else {"zone_closes_at": args.zone}
    half = args.games // 2
    first = run_matches(
        ArenaSeat(a, seating=0), ArenaSeat(b, seating=1), num_games=half, seed=args.seed, **kwargs
    )
    second = run_matches(
        ArenaSeat(b, seating=2),
        ArenaSeat(a, seating=3),
        num_games=args.games - half,
        seed=args.seed + 1,
        **kwargs,
    )
    wins, losses = first.wins_a + second.wins_b, first.wins_b + second.wins_a
    draws, timed_out = first.draws + second.draws, first.timed_out + second.timed_out
    length = (first.mean_length * half + second.mean_length * (args.games - half)) / args.games
    print(
        f"A wins {wins}, draws {draws}, losses {losses} of {args.games} "
        f"(A's score {(wins + draws / 2) / args.games:.3f}); "
        f"on the clock {timed_out / args.games:.2f}, mean length {length:.0f} frames"
    )


if __name__ == "__main__":
    main()
