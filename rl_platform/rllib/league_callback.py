"""The RLlib adapter of the league: config extension + `LeagueCallback` (new API stack only).

`league_extension(config, spec, run_dir=...)` turns a two-player config into a league config:

* a MultiRLModule with the learners (`main`, exploiters; trained), K frozen opponent slots
  `opponent_0..K-1` (same architecture as main, never trained) and one parameter-free
  `ScriptedRLModule` per scripted agent. The module count never depends on the pool size;
  frozen members are swapped into the slots between iterations.
* `policy_mapping_fn = routing.league_mapping_fn`: one agent of each episode plays a learner,
  the other the opponent drawn from the iteration's `SlotPlan` (see routing.py).

`LeagueCallback` runs on the driver and on every env runner:

* env runners, `on_episode_end`: count the learner's result per opponent member under
  `("league_games", learner, member, outcome)` (reduce "sum": per-iteration counts);
* driver, `on_algorithm_init`: open (or resume) the league at `<run_dir>/league`, load the
  slot weights, ship the plan to the env runners;
* driver, `on_train_result`: feed the counts to `League.record_game`, `League.end_iteration`
  (snapshots learners from the learner group), reload the changed slots into the learner group
  and the env runners, ship the new plan and add `league/...` metrics to the result.

Checkpoints: `checkpoint_parts()` / `restore_parts()` let the train loop store the exact league
state (members, ratings, RNG, slots) in each checkpoint and roll the league back to it on resume.
"""

import copy
import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from loguru import logger
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

from rl_platform.base.errors import UserError
from rl_platform.base.lifetime_steps import lifetime_env_steps
from rl_platform.base.seed_tree import SeedTree
from rl_platform.league import routing
from rl_platform.league.league import MAIN_ID, League, learner_ids_for
from rl_platform.league.restore import restore_league
from rl_platform.league.results import Outcome
from rl_platform.league.slots import module_id_for_scripted, module_id_for_slot
from rl_platform.modules.scripted_module import ScriptedRLModule
from rl_platform.rllib.config_callbacks import with_callback
from rl_platform.rllib.facts import run_facts
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.league import LeagueSpec
from rl_platform.storage.layout import LEAGUE_DIR
from rl_platform.teachers import check_scripted_names

CHECKPOINT_PART = "league"


@dataclass(frozen=True)
class LeagueSettings:
    """What the callback needs besides RLlib's arguments (bound into the callback class)."""

    root: str
    spec: LeagueSpec
    env_id: str
    seeds: SeedTree
    """The run's seed tree (`RunFacts.seeds`)."""


def league_modules(main_spec: RLModuleSpec, settings: LeagueSettings) -> dict[str, RLModuleSpec]:
    """Module specs: learners and slots copy main's architecture, scripted agents their own."""
    specs = {lid: copy.deepcopy(main_spec) for lid in learner_ids_for(settings.spec)}
    for k in range(settings.spec.slots):
        specs[module_id_for_slot(k)] = copy.deepcopy(main_spec)
    for name, agent in settings.spec.scripted_agents.items():
        config = {"env_id": settings.env_id, "agent": agent, "seed": settings.seeds.root}
        specs[module_id_for_scripted(name)] = RLModuleSpec(
            module_class=ScriptedRLModule, model_config=config
        )
    return specs


def league_extension(
    config: AlgorithmConfig, spec: ExperimentSpec, *, run_dir: str | Path
) -> AlgorithmConfig:
    """Config extension (pass `functools.partial(league_extension, run_dir=...)`)."""
    if spec.league is None:
        return config
    # An extension is handed (config, spec) alone (`ConfigExtension`, the protocol users' and
    # tests' extensions share), so it reads the run's facts here, once.
    facts = run_facts(spec)
    if not facts.multi_agent:
        raise UserError(f"league: env {spec.env.id!r} is single-agent; a league needs two players")
    check_scripted_names(env_id=spec.env.id, names=list(spec.league.scripted_agents.values()))
    settings = LeagueSettings(
        root=str(Path(run_dir) / LEAGUE_DIR),
        spec=spec.league,
        env_id=spec.env.id,
        seeds=facts.seeds,
    )
    main_spec = config.rl_module_spec.rl_module_specs[MAIN_ID]
    specs = league_modules(main_spec, settings)
    learners = learner_ids_for(spec.league)
    config = config.multi_agent(
        policies=set(specs),
        policy_mapping_fn=routing.league_mapping_fn,
        policies_to_train=learners,
    ).rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
    # A bound subclass carries the settings: RLlib instantiates callbacks without arguments.
    bound = type("BoundLeagueCallback", (LeagueCallback,), {"settings": settings})
    return with_callback(config, bound)


# ----- functions shipped to env runners (module level so they pickle by reference) --------
def _set_module_states(states: Mapping[str, Any], env_runner: Any) -> None:
    wait = getattr(env_runner, "wait_for_rollout", None)
    if wait is not None:  # the array runner's overlapped rollout acts with these modules
        wait()
    module = getattr(env_runner, "module", None)
    if module is None:
        return
    for module_id, state in states.items():
        if module_id in module:
            module[module_id].set_state(state)


def _install_plan(plan: Mapping[str, Any], version: int, seed: int | None, env_runner: Any) -> None:
    index = int(getattr(env_runner, "worker_index", 0) or 0)
    routing.install_plan(plan, version=version, seed=seed, worker_index=index)


class LeagueCallback(RLlibCallback):
    """See the module docstring. Use through `league_extension`, which binds `settings`."""

    settings: ClassVar[LeagueSettings | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.league: League | None = None  # driver only
        self._plan_version = 0

    # ----- env runners -----------------------------------------------------------------------
    def on_episode_end(
        self,
        *,
        episode: Any,
        metrics_logger: Any = None,
        prev_episode_chunks: list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        pairing = routing.pairing_of(episode)
        if pairing is None or metrics_logger is None:
            return
        if routing.is_stale(pairing):
            metrics_logger.log_value(routing.DROPPED_KEY, 1, reduce="sum")
            return
        outcome = _episode_outcome(episode, pairing, prev_episode_chunks or [])
        key = (routing.GAMES_KEY, pairing.learner, pairing.member, outcome.value)
        metrics_logger.log_value(key, 1, reduce="sum")

    # ----- driver ----------------------------------------------------------------------------
    def on_algorithm_init(
        self, *, algorithm: Any, metrics_logger: Any = None, **kwargs: Any
    ) -> None:
        settings = self._settings()
        self.league = League(
            spec=settings.spec, storage=settings.root, seed=settings.seeds.league()
        )
        if self.league.plan is None:
            self.league.plan_slots()
            self.league.save()
        self._load_slots(algorithm, range(settings.spec.slots))
        self._broadcast_plan(algorithm)

    def on_train_result(
        self, *, algorithm: Any, metrics_logger: Any = None, result: dict, **kwargs: Any
    ) -> None:
        league = self._driver_league()
        env_results = result.setdefault(ENV_RUNNER_RESULTS, {})
        games = env_results.pop(routing.GAMES_KEY, {}) or {}
        dropped = _count(env_results.pop(routing.DROPPED_KEY, 0))
        counts = _record_games(league, games)
        report = league.end_iteration(
            iteration=int(result.get("training_iteration", league.iteration + 1)),
            env_steps=lifetime_env_steps(result),
            get_weights=functools.partial(_learner_weights, algorithm),
        )
        reload = report.plan.reload if report.plan is not None else ()
        self._load_slots(algorithm, reload)
        self._broadcast_plan(algorithm)
        metrics = league_metrics(league, counts)
        metrics |= {
            "league/games_dropped": float(dropped),
            "league/snapshots_added": float(len(report.snapshots)),
            "league/slot_reloads": float(len(reload)),
        }
        # The train loop reads custom `league/` keys from the env-runner section.
        env_results.update(metrics)

    def on_env_runners_recreated(
        self, *, algorithm: Any, env_runner_group: Any, env_runner_indices: list[int], **kwargs: Any
    ) -> None:
        # A new env runner has neither the plan nor (maybe) the current slot weights.
        self._load_slots(algorithm, range(self._settings().spec.slots))
        self._broadcast_plan(algorithm)

    # ----- checkpoint participation (called by the train loop) --------------------------------
    def checkpoint_parts(self) -> dict[str, Any]:
        return {CHECKPOINT_PART: self._driver_league().state_dict()}

    def restore_parts(self, parts: Mapping[str, Any], *, algorithm: Any) -> None:
        state = parts.get(CHECKPOINT_PART)
        if state is None:
            logger.warning(
                "league: checkpoint has no league part; keeping {}", self._settings().root
            )
            return
        restore_league(self._driver_league(), state)
        self._load_slots(algorithm, range(self._settings().spec.slots))
        self._broadcast_plan(algorithm)

    # ----- helpers -----------------------------------------------------------------------------
    def _settings(self) -> LeagueSettings:
        if self.settings is None:
            raise UserError("LeagueCallback has no settings: add it with league_extension()")
        return self.settings

    def _driver_league(self) -> League:
        if self.league is None:
            raise RuntimeError("league callback: on_algorithm_init has not run on this process")
        return self.league

    def _load_slots(self, algorithm: Any, indices: Iterable[int]) -> None:
        """Copy the members planned into slots `indices` into the learners and env runners."""
        league = self._driver_league()
        slots = league.slots
        states = {
            module_id_for_slot(k): {
                name: tensor.numpy() for name, tensor in league.load_weights(slots[k]).items()
            }
            for k in indices
            if slots[k] is not None
        }
        if not states:
            return
        algorithm.learner_group.set_weights(states)
        for group in _env_runner_groups(algorithm):
            group.foreach_env_runner(
                functools.partial(_set_module_states, states), local_env_runner=True
            )

    def _broadcast_plan(self, algorithm: Any) -> None:
        plan = self._driver_league().plan
        if plan is None:
            return
        self._plan_version += 1
        ship = functools.partial(
            _install_plan, plan.to_dict(), self._plan_version, self._settings().seeds.root
        )
        for group in _env_runner_groups(algorithm):
            group.foreach_env_runner(ship, local_env_runner=True)


def driver_league(algorithm: Any) -> League:
    """The league of a built league algorithm, as its driver callback holds it: where a
    benchmark adds members to a live run (benchmarks/league_scaling.py)."""
    callbacks = algorithm.callbacks
    for callback in callbacks if isinstance(callbacks, list) else [callbacks]:
        if isinstance(callback, LeagueCallback):
            return callback._driver_league()
    raise UserError("this algorithm has no league (its spec has no `league:` block)")


def _env_runner_groups(algorithm: Any) -> list[Any]:
    groups = [algorithm.env_runner_group, getattr(algorithm, "eval_env_runner_group", None)]
    return [g for g in groups if g is not None]


def _learner_weights(algorithm: Any, learner_id: str) -> dict[str, np.ndarray]:
    return algorithm.learner_group.get_weights(module_ids=[learner_id])[learner_id]


def _agent_return(episodes: Iterable[Any], agent_id: Any) -> float:
    total = 0.0
    for chunk in episodes:
        agent_episode = chunk.agent_episodes.get(agent_id)
        if agent_episode is not None:
            total += float(agent_episode.get_return())
    return total


def _episode_outcome(episode: Any, pairing: routing.Pairing, chunks: list[Any]) -> Outcome:
    learner_agent = pairing.learner_agent
    others = [aid for aid in episode.agent_episodes if aid != learner_agent]
    learner_episode = episode.agent_episodes.get(learner_agent)
    info = learner_episode.get_infos(-1) if learner_episode is not None else None
    everything = [*chunks, episode]
    return routing.game_outcome(
        learner_info=info,
        learner_return=_agent_return(everything, learner_agent),
        opponent_return=_agent_return(everything, others[0]) if others else 0.0,
    )


def _record_games(league: League, games: Mapping[str, Any]) -> dict[str, Counter]:
    """Feed `{learner: {member: {outcome: count}}}` to the league; returns main's counts."""
    counts: dict[str, Counter] = {}
    for learner_id in sorted(games):
        for member_id in sorted(games[learner_id]):
            per_outcome = Counter(
                {Outcome(k): _count(v) for k, v in games[learner_id][member_id].items()}
            )
            per_outcome = +per_outcome  # drop zero counts
            for outcome in _interleaved(per_outcome):
                league.record_game(learner_id=learner_id, opponent_id=member_id, outcome=outcome)
            # RLlib keeps reporting a key once logged (NaN when idle): a member main played
            # long ago would get metrics forever, so the metric count would grow with the pool.
            if learner_id == MAIN_ID and per_outcome:
                counts[member_id] = per_outcome
    return counts


def _count(value: Any) -> int:
    """A per-iteration count; RLlib reports NaN for keys with no new values this iteration."""
    number = float(value) if value is not None else 0.0
    return round(number) if math.isfinite(number) else 0


def _interleaved(counts: Counter) -> list[Outcome]:
    """Outcomes spread evenly (W L W L ...) so rating updates do not depend on count order."""
    total = sum(counts.values())
    keyed = [
        ((i + 0.5) / n, outcome.value, outcome) for outcome, n in counts.items() for i in range(n)
    ]
    return [outcome for *_, outcome in sorted(keyed)][:total]


def league_metrics(league: League, counts: Mapping[str, Counter]) -> dict[str, float]:
    """`league/...` metrics: ratings of learners, main's games and win rates per opponent, the
    opponent mix in effect for the next iteration (`league/mix/<class>`: follows a schedule and
    `mix_pfsp`)."""
    metrics: dict[str, float] = {"league/size": float(len(league.pool))}
    mix = league.matchmaker.mix_in_effect(lambda opp: league.results.win_prob(MAIN_ID, opp))
    for key in league.spec.mix_keys:
        metrics[f"league/mix/{key}"] = float(mix.get(key, 0.0))
    for learner_id in league.learner_ids:
        metrics[f"league/rating/{learner_id}"] = float(league.member(learner_id).ordinal)
    # Members played this iteration or planned for the next: at most K slots + scripted, so
    # the metric count does not grow with the pool.
    planned = league.plan.distribution(MAIN_ID) if league.plan is not None else {}
    opponents = set(counts) | set(planned)
    for member_id in sorted(opponents):
        metrics[f"league/games/{member_id}"] = float(sum(counts.get(member_id, Counter()).values()))
        win_prob = league.results.win_prob(MAIN_ID, member_id)
        if win_prob is not None:
            metrics[f"league/win_rate/{member_id}"] = float(win_prob)
            metrics[f"league/draw_rate/{member_id}"] = float(
                league.results.draw_rate(MAIN_ID, member_id)
            )
    return metrics
