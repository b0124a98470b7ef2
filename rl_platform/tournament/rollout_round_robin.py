"""Round robins in any two-player env (e.g. connect four) through the evaluation rollout.

The generic path of `tournament.play_round_robin`: each ordered seating of a pair plays its
games with `evaluation.rollout.Rollout`, which batches each policy's rows across env copies
and applies the run's env wrappers. Policies sample their actions (seeded).
"""

from collections import Counter
from collections.abc import Mapping

from rl_platform.base.seed_tree import SeedTree
from rl_platform.evaluation.envs import AgentEnv, EnvTarget, probe_env
from rl_platform.evaluation.rollout import Rollout
from rl_platform.league.leaderboard import matchup_matrix, tournament_schedule
from rl_platform.league.results import Outcome
from rl_platform.policies import Policy
from rl_platform.tournament.report import GameResult, TournamentReport

OUTCOMES = {"win": Outcome.WIN, "draw": Outcome.DRAW, "loss": Outcome.LOSS}


def play_rollout_round_robin(
    policies: Mapping[str, Policy],
    *,
    target: EnvTarget,
    games: int,
    seed: int = 0,
    parallel: int = 16,
) -> TournamentReport:
    """Every pair plays `games` games (seats alternating); results from the first seat's side."""
    agents = probe_env(target).agent_ids
    ids = list(policies)
    seatings = Counter(tournament_schedule(ids, games))
    results: list[GameResult] = []
    for index, ((first, second), count) in enumerate(sorted(seatings.items())):
        records = Rollout(
            make_env=lambda: AgentEnv(target),
            policies={"first": policies[first], "second": policies[second]},
            seats=lambda _index: {agents[0]: "first", agents[1]: "second"},
            seed=SeedTree(seed).seating(index),  # distinct games per seating
            parallel=min(parallel, count),
        ).run(count)
        for record in records:
            outcome = record.outcomes.get(agents[0])
            if outcome in OUTCOMES:
                results.append((first, second, OUTCOMES[outcome]))
    return TournamentReport(results=results, matrix=matchup_matrix(ids, results))
