"""Evaluation during training (`evaluation:` in the spec): the trained module's live weights
play fixed episodes in the driver every N env steps, greedy and/or sampled, against each
evaluation opponent, through `rlp eval`'s rollout (rl_platform/evaluation/) or, for the
duel, its vectorized arena like `rlp league tournament`.

The loop hands in the weights of the checkpoint it takes at the same iteration, so every
evaluated policy is a checkpoint on disk and the best one can be kept as `best`; a run with
`env.observation_filter` hands in that checkpoint's filter statistics too (the env runners'
merged ones, as `rlp eval` of the same checkpoint reads them).
"""

import time
from typing import Any

import numpy as np

from rl_platform.base.metric_keys import EVAL_PREFIX
from rl_platform.base.module_ids import trained_module_in
from rl_platform.evaluation.arena_games import arena_episodes, arena_plays
from rl_platform.evaluation.envs import EnvTarget, env_shape
from rl_platform.evaluation.eval import (
    DEFAULT_OPPONENTS,
    OPPONENT_KEY,
    POLICY_KEY,
    play_episodes,
    seat_plan,
)
from rl_platform.evaluation.summary import summarize
from rl_platform.policies import EnvContext, Policy, learned_policy, load_policy
from rl_platform.policies.observation_filter import ObservationFilter
from rl_platform.rllib.facts import RunFacts
from rl_platform.spec import ExperimentSpec
from rl_platform.teachers import ENV_IDS
from rl_platform.utils.user_code import is_entry_point

EVAL_SECONDS_KEY = "perf/eval_s"


def opponent_uri(agent: str, env_id: str) -> str:
    """A scripted agent (`based`, or a user's `package.module:act_fn`) as its URI; URIs
    (`league://...`) and `random` pass through."""
    if "://" in agent or agent == "random":
        return agent
    if is_entry_point(agent):
        return f"scripted://{agent}"
    alias = next((a for a, full in ENV_IDS.items() if full == env_id), env_id)
    return f"scripted://{alias}/{agent}"


class PeriodicEvaluation:
    """Decides when to evaluate and turns weights into `eval/...` metrics."""

    def __init__(self, spec: ExperimentSpec, *, facts: RunFacts, start_env_steps: int) -> None:
        assert spec.evaluation is not None
        self.spec, self.settings = spec, spec.evaluation
        self.target = EnvTarget(spec.env.id, tuple(spec.env.wrappers), dict(spec.env.kwargs))
        self.shape = env_shape(facts.agent_spaces)
        self.last_env_steps = start_env_steps
        self.opponents = self._opponent_names()
        self.best_metric = self.settings.best_metric or self._default_best_metric()

    def _opponent_names(self) -> list[str]:
        if not self.shape.two_player:
            return []
        if self.settings.opponents:
            return list(self.settings.opponents)
        default = DEFAULT_OPPONENTS.get(self.target.env_id)
        return [default.rsplit("/", 1)[-1]] if default else ["random"]

    def _default_best_metric(self) -> str:
        mode = self.settings.modes[0]
        if self.opponents:
            return f"{EVAL_PREFIX}{mode}/win_rate/{self.opponents[0]}"
        return f"{EVAL_PREFIX}{mode}/return_mean"

    def due(self, env_steps: int) -> bool:
        """True once `env_steps` crosses the next multiple of `every_env_steps`: multiples, not
        distances from the last evaluation, so a resumed run evaluates where an uninterrupted
        one does (resumed at 96k with every 200k: at 200k, not at 296k)."""
        every = self.settings.every_env_steps
        return env_steps // every > self.last_env_steps // every

    def run(
        self,
        module_weights: dict[str, Any],
        *,
        env_steps: int,
        observation_filter: ObservationFilter | None = None,
    ) -> dict[str, float]:
        """`eval/<mode>/...` metrics of the trained module in `module_weights` (module id ->
        its weights), acting through `observation_filter` (the run's, if it has one), and
        `perf/eval_s`."""
        self.last_env_steps = env_steps
        started = time.monotonic()
        weights = _trained_weights(module_weights)
        metrics: dict[str, float] = {}
        for mode in self.settings.modes:
            policy = self._policy(
                weights, sample=mode == "sampled", agent=0, observation_filter=observation_filter
            )
            if not self.opponents:
                summary = summarize(self._play(policy, None), POLICY_KEY)
                metrics[f"{EVAL_PREFIX}{mode}/return_mean"] = float(summary["return_mean"])
                continue
            returns = []
            for name in self.opponents:
                win_rate, return_mean = self._match(policy, self._opponent(name))
                returns.append(return_mean)
                metrics[f"{EVAL_PREFIX}{mode}/win_rate/{name}"] = win_rate
                metrics[f"{EVAL_PREFIX}{mode}/return_mean/{name}"] = return_mean
            metrics[f"{EVAL_PREFIX}{mode}/return_mean"] = float(np.mean(returns))
        metrics[EVAL_SECONDS_KEY] = time.monotonic() - started
        return metrics

    def _context(self, agent: int) -> EnvContext:
        observation_space, action_space = self.shape.spaces[self.shape.agent_ids[agent]]
        return EnvContext(self.target.env_id, observation_space, action_space)

    def _policy(
        self,
        weights: dict[str, np.ndarray],
        *,
        sample: bool,
        agent: int,
        observation_filter: ObservationFilter | None,
    ) -> Policy:
        # A run that acts on the GPU evaluates there too (a CPU forward of the 4M-parameter
        # reference recipe is ~100x slower per game step).
        return learned_policy(
            self.spec,
            weights,
            env=self._context(agent),
            sample=sample,
            label="training",
            device=self.spec.resources.acting_device,
            observation_filter=observation_filter,
        )

    def _opponent(self, name: str) -> Policy:
        uri = opponent_uri(self.spec.scripted_agent(name), self.target.env_id)
        return load_policy(uri, env=self._context(1), sample=False)

    def _match(self, policy: Policy, opponent: Policy) -> tuple[float, float]:
        """(win rate, return mean) of `policy`; the duel plays in its vectorized arena (all
        games at once, one batched forward per step), other games through the rollout."""
        if arena_plays(self.target, max_steps=self.settings.max_steps):
            records = arena_episodes(
                {POLICY_KEY: policy, OPPONENT_KEY: opponent},
                episodes=self.settings.episodes,
                seat=self.settings.seat,
                seed=self.settings.seed,
                env_kwargs=self.spec.env.kwargs,
            )
        else:
            records = self._play(policy, opponent)
        summary = summarize(records, POLICY_KEY)
        return float(summary.get("win_rate", 0.0)), float(summary["return_mean"])

    def _play(self, policy: Policy, opponent: Policy | None) -> list[Any]:
        agents = self.shape.agent_ids
        if opponent is None:
            policies, seats, seat = {POLICY_KEY: policy}, dict.fromkeys(agents, POLICY_KEY), "first"
        else:
            policies = {POLICY_KEY: policy, OPPONENT_KEY: opponent}
            seats, seat = {agents[0]: POLICY_KEY, agents[1]: OPPONENT_KEY}, self.settings.seat
        return play_episodes(
            self.target,
            policies,
            seat_plan(seats, seat),
            episodes=self.settings.episodes,
            seed=self.settings.seed,
            parallel=self.settings.parallel,
            max_steps=self.settings.max_steps,
        )


def _trained_weights(module_weights: dict[str, Any]) -> dict[str, np.ndarray]:
    module_id = trained_module_in(module_weights)
    if module_id is None:
        raise KeyError(f"no trained module among {sorted(module_weights)}")
    return module_weights[module_id]
