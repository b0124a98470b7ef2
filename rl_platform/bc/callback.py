"""`BCCallback`: moves the run through the BC schedule and curriculum; logs per-slice results.

Driver side: the settings in force are always `settings_at(bc_spec, env_steps)` (pure, see
`rl_platform.imitation.schedule`). They are pushed to every env runner's `TeacherLabels` piece
and to every learner (`learner_group.foreach_learner`)

* at algorithm init (env step 0) and when env runners are recreated after a failure;
* after every training iteration, for the env steps sampled so far;
* after a resume (`restore_parts`, called by the train loop once the algorithm state, and with
  it the env step count, is restored), so a resumed run continues in the exact phase.

A teacher from the run itself (`checkpoint://{run}/best`) is resolved to the checkpoint it names
when its phase starts and kept so (`rl_platform.bc.run_teacher`); the pins go into every
checkpoint (part `bc`).

Each iteration's result gets `curriculum/phase`, `bc/coef`, `bc/teacher_led`, `bc/student_led`
(the settings that iteration sampled and trained with) in its env-runner section, which the
train loop passes through.

Env-runner side, `on_episode_end`: returns (and duel outcomes) of the cloned module's episodes
per slice, `bc/return_mean/<mode>`, `bc/win_rate/<mode>`, and over the student's own games
(plain + student-led) `bc/student_return_mean`, `bc/student_win_rate`.
"""

import functools
from pathlib import Path
from typing import Any, ClassVar

from loguru import logger
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS

from rl_platform.base.lifetime_steps import lifetime_env_steps, logged_lifetime_env_steps
from rl_platform.base.metric_keys import BC_COEF
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.bc.run_teacher import RunTeachers
from rl_platform.imitation.labeler import find_labelers
from rl_platform.imitation.schedule import BCSettings, settings_at
from rl_platform.imitation.slicing import BC_MODE, BCMode
from rl_platform.policies.loading import learned_parts
from rl_platform.ray_runtime.rllib_internals import env_to_module_pipeline
from rl_platform.spec.bc import BCSpec

WINDOW = 100
CHECKPOINT_PART = "bc"
OUTCOME_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def settings_metrics(settings: BCSettings) -> dict[str, float]:
    return {
        "curriculum/phase": float(settings.phase),
        BC_COEF: float(settings.coef),
        "bc/teacher_led": float(settings.teacher_led),
        "bc/student_led": float(settings.student_led),
    }


# ----- functions shipped to env runners and learners (module level: pickled by reference) ----
def apply_to_env_runner(settings: BCSettings, env_runner: Any) -> int:
    """Install `settings` in the env runner's `TeacherLabels` pieces; returns how many."""
    pieces = find_labelers(env_to_module_pipeline(env_runner))
    for piece in pieces:
        piece.apply_settings(settings)
    return len(pieces)


def preload_on_env_runner(
    uri: str, spec: Any, weights: dict, observation_filter: Any, env_runner: Any
) -> int:
    """Give the env runner's teachers `uri`'s model, weights and observation filter (they may
    not see the run folder, e.g. on another node); returns how many teachers got them."""
    pieces = find_labelers(env_to_module_pipeline(env_runner))
    for piece in pieces:
        piece.teacher().preload(uri, spec, weights, observation_filter=observation_filter)
    return len(pieces)


def apply_to_learner(settings: BCSettings, learner: Any) -> None:
    if hasattr(learner, "set_bc_settings"):
        learner.set_bc_settings(settings)


class BCCallback(RLlibCallback):
    """See the module docstring. Use through `bc_extension`, which binds `bc_spec`."""

    bc_spec: ClassVar[BCSpec | None] = None
    module_id: ClassVar[str] = MAIN_MODULE_ID
    run_dir: ClassVar[Path | None] = None

    def __init__(self) -> None:
        super().__init__()
        self.settings: BCSettings | None = None  # driver only
        self.run_teachers = RunTeachers(self.run_dir)  # driver only
        self.shipped: str | None = None  # driver only: the run teacher env runners hold

    # ----- driver ----------------------------------------------------------------------------
    def push(
        self, algorithm: Any, *, env_steps: int, env_runner_ids: list[int] | None = None
    ) -> BCSettings:
        assert self.bc_spec is not None, "BCCallback needs a bound bc_spec"
        settings = settings_at(self.bc_spec, env_steps)
        phases = self.bc_spec.effective_phases()
        teacher_phase = min(settings.phase, len(phases) - 1)
        settings = self.run_teachers.resolve(
            settings,
            teacher_phase=teacher_phase,
            retake_every=phases[teacher_phase].retake_every_env_steps,
        )
        if self.settings is not None and settings.phase != self.settings.phase:
            logger.info("bc: curriculum phase {} at {:,} env steps", settings.phase, env_steps)
        self.settings = settings
        if self.run_teachers.owns(settings.teacher) and settings.teacher != self.shipped:
            self.ship_teacher(algorithm.env_runner_group, env_runner_ids)
        apply = functools.partial(apply_to_env_runner, settings)
        algorithm.env_runner_group.foreach_env_runner(
            apply, local_env_runner=True, remote_worker_ids=env_runner_ids
        )
        algorithm.learner_group.foreach_learner(functools.partial(apply_to_learner, settings))
        return settings

    def ship_teacher(self, env_runner_group: Any, env_runner_ids: list[int] | None) -> None:
        """Send the current run teacher's spec and weights to the env runners."""
        assert self.settings is not None and self.settings.teacher is not None
        uri = self.settings.teacher
        spec, weights, observation_filter = learned_parts(uri)
        ship = functools.partial(preload_on_env_runner, uri, spec, weights, observation_filter)
        env_runner_group.foreach_env_runner(
            ship, local_env_runner=True, remote_worker_ids=env_runner_ids
        )
        self.shipped = uri

    def on_algorithm_init(self, *, algorithm: Any, **kwargs: Any) -> None:
        self.push(algorithm, env_steps=logged_lifetime_env_steps(algorithm.metrics))

    def on_env_runners_recreated(
        self, *, algorithm: Any, env_runner_group: Any, env_runner_indices: list[int], **kwargs
    ) -> None:
        if kwargs.get("is_evaluation") or self.settings is None:
            return
        if self.run_teachers.owns(self.settings.teacher):
            self.ship_teacher(env_runner_group, env_runner_indices)
        apply = functools.partial(apply_to_env_runner, self.settings)
        env_runner_group.foreach_env_runner(
            apply, local_env_runner=False, remote_worker_ids=env_runner_indices
        )

    def on_train_result(self, *, algorithm: Any, result: dict, **kwargs: Any) -> None:
        env_results = result.setdefault(ENV_RUNNER_RESULTS, {})
        if self.settings is not None:
            env_results.update(settings_metrics(self.settings))
        self.push(algorithm, env_steps=lifetime_env_steps(result))

    # ----- train loop participant (rl_platform.run.loop) -------------------------------------
    def checkpoint_parts(self) -> dict[str, Any]:
        """The settings are a function of the restored env steps; only the pinned teachers of
        `checkpoint://{run}` phases are state."""
        return {CHECKPOINT_PART: {"teacher_pins": self.run_teachers.state()}}

    def restore_parts(self, parts: dict[str, Any], *, algorithm: Any) -> None:
        self.run_teachers.restore(dict(parts.get(CHECKPOINT_PART, {}).get("teacher_pins", {})))
        self.push(algorithm, env_steps=logged_lifetime_env_steps(algorithm.metrics))

    # ----- env runners -----------------------------------------------------------------------
    def on_episode_end(
        self,
        *,
        episode: Any,
        metrics_logger: Any = None,
        prev_episode_chunks: list[Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if metrics_logger is None:
            return
        for agent_id, sa_episode in self._cloned_agents(episode):
            if len(sa_episode) == 0 or BC_MODE not in sa_episode.extra_model_outputs:
                continue
            mode = BCMode(int(sa_episode.get_extra_model_outputs(BC_MODE, -1)))
            chunks = [*(prev_episode_chunks or []), episode]
            episode_return = sum(_agent_return(chunk, agent_id) for chunk in chunks)
            name = mode.name.lower()
            student = mode != BCMode.TEACHER_LED
            self._log(metrics_logger, f"bc/return_mean/{name}", episode_return, student, "return")
            infos = sa_episode.get_infos()
            last = infos[-1] if len(infos) else None
            outcome = last.get("outcome") if isinstance(last, dict) else None
            if outcome in OUTCOME_SCORES:
                score = OUTCOME_SCORES[outcome]
                self._log(metrics_logger, f"bc/win_rate/{name}", score, student, "win_rate")

    @staticmethod
    def _log(metrics_logger: Any, key: str, value: float, student: bool, what: str) -> None:
        metrics_logger.log_value(key, float(value), reduce="mean", window=WINDOW)
        if student:
            name = "bc/student_return_mean" if what == "return" else "bc/student_win_rate"
            metrics_logger.log_value(name, float(value), reduce="mean", window=WINDOW)

    def _cloned_agents(self, episode: Any) -> list[tuple[Any, Any]]:
        if not isinstance(episode, MultiAgentEpisode):
            return [(None, episode)]
        return [
            (agent_id, sa_episode)
            for agent_id, sa_episode in episode.agent_episodes.items()
            if episode.module_for(agent_id) == self.module_id
        ]


def _agent_return(chunk: Any, agent_id: Any) -> float:
    if isinstance(chunk, MultiAgentEpisode):
        sa_episode = chunk.agent_episodes.get(agent_id)
        return float(sa_episode.get_return()) if sa_episode is not None else 0.0
    return float(chunk.get_return())
