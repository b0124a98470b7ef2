"""Per-game running totals of the array env runner and the metrics they become (no Ray).

Everything is counted from the learner's seat (issue: per-module metrics): a game's
`episode_return_mean` sample is the learner seat's own return (in mirror games, where one
module plays every seat, each seat gives one sample), `reward/<component>` sums the learner
seat's components, `action_counts/<i>` counts every action the trained modules took (the
driver turns the counts into `actions/<name>_frac`, which sums to 1). The keys are those of
`rl_platform.base.metric_keys`, shared with the stock runner's callback. League results use the
keys the league callback reads (rl_platform/league/routing.py).
"""

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rl_platform.base.lifetime_steps import NUM_ENV_STEPS_SAMPLED_LIFETIME
from rl_platform.base.metric_keys import ACTION_COUNTS, LEARNER_RETURN_MEAN, MODULE_RETURN_MEAN
from rl_platform.envs.vector_game import DRAW
from rl_platform.league import routing
from rl_platform.league.results import Outcome
from rl_platform.sampling.seat_plan import NO_MEMBER, SeatPlan

WINDOW = 100
# RLlib's result keys (ray/rllib/utils/metrics/__init__.py), spelled out to stay Ray-free.
EPISODE_RETURN_MEAN = "episode_return_mean"
EPISODE_LEN_MEAN = "episode_len_mean"
NUM_EPISODES = "num_episodes"
NUM_EPISODES_LIFETIME = "num_episodes_lifetime"
NUM_ENV_STEPS_SAMPLED = "num_env_steps_sampled"
NUM_AGENT_STEPS_SAMPLED = "num_agent_steps_sampled"
NUM_MODULE_STEPS_SAMPLED = "num_module_steps_sampled"


def outcome_of(winner: int, seat: int) -> Outcome:
    if winner == DRAW:
        return Outcome.DRAW
    return Outcome.WIN if winner == seat else Outcome.LOSS


class GameStats:
    """Running per-game sums; `finish` turns ended games into metric values."""

    def __init__(self, *, num_games: int, num_seats: int, components: Sequence[str]) -> None:
        self.components = tuple(components)
        self.returns = np.zeros((num_games, num_seats), np.float64)
        self.lengths = np.zeros(num_games, np.int64)
        self.component_sums = np.zeros((len(self.components), num_games, num_seats), np.float64)

    def add_step(self, rewards: np.ndarray, components: Mapping[str, np.ndarray]) -> None:
        self.returns += rewards
        self.lengths += 1
        for index, name in enumerate(self.components):
            self.component_sums[index] += components[name]

    def finish(
        self,
        games: np.ndarray,
        *,
        winner: np.ndarray,
        seats: SeatPlan,
        trained: frozenset[str],
        logger: Any,
    ) -> list[tuple[int, int, Outcome, float]]:
        """Log ended `games`, reset their sums; returns learners' (game, seat, outcome, return)."""
        results = []
        for game in games.tolist():
            learner_seats = self._learner_seats(game, seats, trained)
            self._log_returns(game, learner_seats, seats, logger)
            for seat in learner_seats:
                outcome = outcome_of(int(winner[game]), seat)
                results.append((game, seat, outcome, float(self.returns[game, seat])))
            self._log_league(game, seats, int(winner[game]), logger)
        self.returns[games] = 0.0
        self.lengths[games] = 0
        self.component_sums[:, games] = 0.0
        if len(games):
            logger.log_value(NUM_EPISODES, len(games), reduce="sum")
            logger.log_value(NUM_EPISODES_LIFETIME, len(games), reduce="lifetime_sum")
        return results

    def _learner_seats(self, game: int, seats: SeatPlan, trained: frozenset[str]) -> list[int]:
        seat = int(seats.learner_seat[game])
        if seat >= 0:
            return [seat]
        row = seats.module_of[game]
        return [p for p in range(len(row)) if seats.module_ids[int(row[p])] in trained]

    def _log_returns(self, game: int, learner_seats: list[int], seats: SeatPlan, logger) -> None:
        logger.log_value(EPISODE_LEN_MEAN, float(self.lengths[game]), window=WINDOW)
        for seat in learner_seats:
            own = float(self.returns[game, seat])
            logger.log_value(EPISODE_RETURN_MEAN, own, window=WINDOW)
            logger.log_value(LEARNER_RETURN_MEAN, own, window=WINDOW)
            for index, name in enumerate(self.components):
                value = float(self.component_sums[index, game, seat])
                logger.log_value(f"reward/{name}", value, window=WINDOW)
        per_module: dict[str, float] = {}
        for seat, module in enumerate(seats.module_of[game].tolist()):
            module_id = seats.module_ids[module]
            per_module[module_id] = per_module.get(module_id, 0.0) + self.returns[game, seat]
        for module_id, value in per_module.items():
            logger.log_value((MODULE_RETURN_MEAN, module_id), float(value), window=WINDOW)

    def _log_league(self, game: int, seats: SeatPlan, winner: int, logger: Any) -> None:
        seat = int(seats.learner_seat[game])
        member = seats.member[game]
        if seat < 0 or member == NO_MEMBER:
            return
        opponent_seat = next(p for p in range(seats.module_of.shape[1]) if p != seat)
        learner = seats.module_ids[int(seats.module_of[game, seat])]
        pairing = routing.Pairing(
            learner=learner,
            learner_agent=seat,
            member=member,
            module=seats.module_ids[int(seats.module_of[game, opponent_seat])],
            version=int(seats.plan_version[game]),
        )
        if routing.is_stale(pairing):
            logger.log_value(routing.DROPPED_KEY, 1, reduce="sum")
            return
        outcome = outcome_of(winner, seat)
        logger.log_value((routing.GAMES_KEY, learner, member, outcome.value), 1, reduce="sum")


def log_action_counts(actions: np.ndarray, num_actions: int, logger: Any) -> None:
    """`action_counts/<i>`: the trained modules' actions in one sample call, summed."""
    if len(actions) == 0:
        return
    counts = np.bincount(actions, minlength=num_actions)[:num_actions]
    for index, count in enumerate(counts.tolist()):
        logger.log_value((ACTION_COUNTS, str(index)), int(count), reduce="sum")


def log_sample_counts(
    logger: Any,
    *,
    env_steps: int,
    moves: Mapping[str, int],
    trained_actions: Sequence[tuple[str, np.ndarray]],
    num_actions: int,
) -> None:
    """RLlib's sampling counters of one sample call (env, agent and module steps) and the
    trained modules' action counts."""
    logger.log_value(NUM_ENV_STEPS_SAMPLED, env_steps, reduce="sum")
    logger.log_value(
        NUM_ENV_STEPS_SAMPLED_LIFETIME, env_steps, reduce="lifetime_sum", with_throughput=True
    )
    for agent_id, count in moves.items():
        logger.log_value((NUM_AGENT_STEPS_SAMPLED, agent_id), int(count), reduce="sum")
    counts: dict[str, int] = {}
    for module_id, actions in trained_actions:
        counts[module_id] = counts.get(module_id, 0) + len(actions)
    for module_id, count in counts.items():
        logger.log_value((NUM_MODULE_STEPS_SAMPLED, module_id), count, reduce="sum")
    if trained_actions:
        every = np.concatenate([actions for _, actions in trained_actions])
        log_action_counts(every, num_actions, logger)
