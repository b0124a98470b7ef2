"""Round robins in any two-player env (e.g. connect four) through the evaluation rollout.

The duel has its own vectorized arena (tournament.py). Other envs seat `league://RUN/ID`
policies (frozen weights from the pool, `main` from the latest checkpoint, scripted members as
their agent) on the env's two agents with `evaluation.rollout.Rollout`, which batches each
policy's rows across env copies. Seats alternate as in `tournament_schedule`; policies sample
their actions (seeded), as in the duel arena.
"""

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rl_platform.errors import UserError
from rl_platform.evaluation.envs import AgentEnv, EnvTarget, probe_env
from rl_platform.evaluation.rollout import Rollout
from rl_platform.league.leaderboard import matchup_matrix, tournament_schedule
from rl_platform.league.results import Outcome
from rl_platform.league.tournament import GameResult, TournamentReport
from rl_platform.policies import EnvContext, Policy, load_policy

OUTCOMES = {"win": Outcome.WIN, "draw": Outcome.DRAW, "loss": Outcome.LOSS}


def member_rollout_policies(
    run_dir: Path, ids: Sequence[str], *, target: EnvTarget
) -> dict[str, Policy]:
    """One sampled policy per member id, built for the env's first agent's spaces."""
    shape = probe_env(target)
    if not shape.two_player:
        raise UserError(f"tournaments need a two-player env; {target.env_id} is not one")
    observation_space, action_space = shape.spaces[shape.agent_ids[0]]
    context = EnvContext(target.env_id, observation_space, action_space)
    return {
        member_id: load_policy(f"league://{run_dir}/{member_id}", env=context, sample=True)
        for member_id in ids
    }


def play_rollout_round_robin(
    policies: dict[str, Policy],
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
            seed=seed + 7919 * index,  # distinct games per seating
            parallel=min(parallel, count),
        ).run(count)
        for record in records:
            outcome = record.outcomes.get(agents[0])
            if outcome in OUTCOMES:
                results.append((first, second, OUTCOMES[outcome]))
    return TournamentReport(results=results, matrix=matchup_matrix(ids, results))
