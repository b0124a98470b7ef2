"""Config extension that puts the array env runner into an RLlib config (RLlib adapter).

`vector_runner_extension(config, spec, facts=...)` resolves `env.runner`
(`ExperimentSpec.runner_choice`), logs the choice, and for `vector` binds the game settings
into a `VectorEnvRunner` subclass passed as `env_runner_cls` (RLlib instantiates runners
from the class alone, locally and in remote actors, so settings travel as class
attributes). With the array learner it adds `ShareLearnerModules` (acting reads the
learner's modules where both are local on one device).
"""

from loguru import logger
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rl_platform.env_runner.shared_modules import ShareLearnerModules
from rl_platform.env_runner.vector_env_runner import VectorEnvRunner
from rl_platform.rllib.config_callbacks import with_callback
from rl_platform.rllib.facts import RunFacts
from rl_platform.sampling.runner_settings import VectorRunnerSettings
from rl_platform.spec import ExperimentSpec


def vector_runner_extension(
    config: AlgorithmConfig, spec: ExperimentSpec, *, facts: RunFacts
) -> AlgorithmConfig:
    """Use `VectorEnvRunner` when the spec resolves to the array runner (module docstring)."""
    choice = spec.runner_choice()
    if choice.kind != "vector":
        logger.info("env runner: rllib (RLlib's stock runner; {})", choice.reason)
        return config
    factory = facts.env.vector_game
    assert factory is not None
    kwargs = dict(spec.env.kwargs)
    settings = VectorRunnerSettings(
        env_id=spec.env.id,
        game_factory=factory,
        game_kwargs=kwargs,
        seed=facts.env_seeds.root,
        history=facts.model.opponent_history,
        opponent_actions=facts.model.opponent_actions_key is not None,
        acting_device=spec.resources.acting_device,
        cuda_graphs=spec.resources.cuda_graphs,
        hidden=spec.env.hidden_view(),
        array_learner=spec.learner_choice().kind == "array",
        overlap=spec.resources.overlap,
    )
    bound = type("BoundVectorEnvRunner", (VectorEnvRunner,), {"settings": settings})
    logger.info(
        "env runner: vector ({} games per runner, acting on {}; {})",
        spec.env.envs_per_runner,
        spec.resources.acting_device,
        choice.reason,
    )
    learner = spec.learner_choice()
    logger.info("learner: {} ({})", learner.kind, learner.reason)
    config = config.env_runners(env_runner_cls=bound)
    if learner.kind == "array" and not spec.resources.overlap:
        config = with_callback(config, ShareLearnerModules)
    return config
