"""`bc_extension(config, spec)`: the BC wiring of an RLlib config (`build_algorithm_config`).

* `bc:` (PPO only): `TeacherLabels` first in the env-to-module pipeline (before any piece the
  model adds, e.g. the transformer's opponent history), `TeacherLedActions` in the
  module-to-env pipeline, the spec for `BCPPOLearner` in `learner_config_dict`, and the
  `BCCallback` that walks the schedule / curriculum.
* `algo: BC`: offline behaviour cloning from `rlp record` episodes (`rl_platform.bc.offline`).
* `init_from:`: the `InitFromCallback` loading another run's policy weights.

A no-op for specs that use none of these.
"""

from pathlib import Path
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rl_platform.base.errors import UserError
from rl_platform.bc.callback import BCCallback
from rl_platform.bc.init_from import InitFromCallback
from rl_platform.bc.offline import offline_bc_config
from rl_platform.bc.teacher_actions import TeacherLedActions
from rl_platform.bc.teacher_labels import TeacherLabels
from rl_platform.imitation.schedule import settings_at
from rl_platform.learners.bc_ppo import LEARNER_CONFIG_KEY
from rl_platform.ray_runtime.rllib_internals import connector_factories
from rl_platform.rllib.config_callbacks import with_callback
from rl_platform.rllib.facts import RunFacts, run_facts
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.bc import THIS_RUN, uses_this_run


def _as_list(pieces: Any) -> list[Any]:
    if pieces is None:
        return []
    return list(pieces) if isinstance(pieces, list | tuple) else [pieces]


class EnvToModuleWithLabels:
    """`env_to_module_connector` factory: `TeacherLabels`, then the pieces of `inner`."""

    def __init__(self, inner: Any, labels_kwargs: dict[str, Any]) -> None:
        self.inner = inner
        self.labels_kwargs = labels_kwargs

    def __call__(self, env: Any = None, spaces: Any = None, device: Any = None) -> list[Any]:
        inner = self.inner(env, spaces, device) if self.inner is not None else None
        return [TeacherLabels(**self.labels_kwargs), *_as_list(inner)]


class ModuleToEnvWithTeacher:
    """`module_to_env_connector` factory: the pieces of `inner`, then `TeacherLedActions`."""

    def __init__(self, inner: Any, actions_kwargs: dict[str, Any]) -> None:
        self.inner = inner
        self.actions_kwargs = actions_kwargs

    def __call__(self, env: Any = None, spaces: Any = None) -> list[Any]:
        inner = self.inner(env, spaces) if self.inner is not None else None
        return [*_as_list(inner), TeacherLedActions(**self.actions_kwargs)]


def check_teachers(spec: ExperimentSpec, *, run_dir: Path | None) -> None:
    """Fail fast on teachers that cannot play this env (scripted), do not exist (paths) or
    cannot exist yet (this run's checkpoints)."""
    from rl_platform.spec.policy_uri import PolicyKind, parse_policy_uri
    from rl_platform.teachers import get_scripted

    assert spec.bc is not None
    for index, phase in enumerate(spec.bc.effective_phases()):
        if phase.teacher is None:
            continue
        uri = parse_policy_uri(phase.teacher)
        where = f"bc teacher {phase.teacher!r} (phase {index})"
        if uses_this_run(phase.teacher):
            if run_dir is None:
                raise UserError(f"{where}: checkpoint://{THIS_RUN} needs a run folder (rlp train)")
        elif uri.kind == PolicyKind.SCRIPTED:
            entry = get_scripted(str(uri.env), str(uri.name))
            if entry.env_id != spec.env.id:
                raise UserError(f"{where} plays {entry.env_id}, not {spec.env.id}")
        elif uri.path is not None and not Path(uri.path).expanduser().exists():
            raise UserError(f"{where}: {uri.path} does not exist")


def _bc_online(
    config: AlgorithmConfig, spec: ExperimentSpec, *, run_dir: Path | None, facts: RunFacts
) -> AlgorithmConfig:
    assert spec.bc is not None
    if spec.algo != "PPO":
        raise UserError(f"bc: needs algo PPO (got {spec.algo}); for offline BC use algo: BC")
    check_teachers(spec, run_dir=run_dir)
    multi_agent = facts.multi_agent
    modules = [spec.bc.module] if multi_agent else []
    labels_kwargs = {
        "settings": settings_at(spec.bc, 0),
        "env_id": spec.env.id,
        "multi_agent": multi_agent,
        "modules": modules,
        "seed": facts.seeds.root,
    }
    actions_kwargs = {"multi_agent": multi_agent, "modules": modules}
    env_to_module, module_to_env = connector_factories(config)
    config = config.env_runners(
        env_to_module_connector=EnvToModuleWithLabels(env_to_module, labels_kwargs),
        module_to_env_connector=ModuleToEnvWithTeacher(module_to_env, actions_kwargs),
    )
    config = config.learners(
        learner_config_dict={**config.learner_config_dict, LEARNER_CONFIG_KEY: spec.bc.model_dump()}
    )
    bound = type(
        "BoundBCCallback",
        (BCCallback,),
        {"bc_spec": spec.bc, "module_id": spec.bc.module, "run_dir": run_dir},
    )
    return with_callback(config, bound)


def bc_extension(
    config: AlgorithmConfig, spec: ExperimentSpec, *, run_dir: Path | None = None
) -> AlgorithmConfig:
    """See the module docstring; `run_dir` is where `checkpoint://{run}` teachers come from."""
    # An extension is handed (config, spec) alone (`ConfigExtension`, the protocol users' and
    # tests' extensions share), so it reads the run's facts here, once.
    facts = run_facts(spec)
    if spec.algo == "BC":
        config = offline_bc_config(config, spec, facts=facts)
    if spec.init_from is not None:
        bound = type("BoundInitFromCallback", (InitFromCallback,), {"source": spec.init_from})
        config = with_callback(config, bound)
    if spec.bc is not None:
        config = _bc_online(config, spec, run_dir=run_dir, facts=facts)
    return config
