"""The one place that turns an `ExperimentSpec` into a stock RLlib `AlgorithmConfig`.

New API stack only (RLModule, Learner, ConnectorV2, EnvRunner); no subclassing of
`AlgorithmConfig` or `Algorithm`. Multi-agent and league wiring hook in through `extend`.
"""

from collections.abc import Callable
from typing import Any

from loguru import logger
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

from rl_platform.batch_scaling import auto_scale_batch
from rl_platform.devices import resolve_device
from rl_platform.envs.catalog import is_multi_agent
from rl_platform.envs.registry import registered_env_name
from rl_platform.errors import SpecError
from rl_platform.sampling.wiring import vector_runner_extension
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.training import BCTraining, DQNTraining, PPOTraining, SACTraining

MAIN_MODULE_ID = "main"
STATEFUL_MODEL_TYPES = ("lstm", "transformer_lstm")
# Algorithms whose learners read ACTION_DIST_INPUTS and values (ValueFunctionAPI), which is
# what rl_platform/modules/masked_mlp_module.py provides; DQN and SAC need Q-networks.
MASKED_MLP_ALGOS = ("PPO", "APPO", "IMPALA", "BC")
# PettingZoo AEC games: one agent acts per env step. Every such game in the catalog
# (rl_platform/envs/catalog.py) is a two-player game.
TURN_BASED_PREFIX = "pettingzoo/"
TURN_BASED_PLAYERS = 2
ConfigExtension = Callable[[AlgorithmConfig, ExperimentSpec], AlgorithmConfig]


def _config_class(algo: str) -> type[AlgorithmConfig]:
    from ray.rllib.algorithms.appo import APPOConfig
    from ray.rllib.algorithms.bc import BCConfig
    from ray.rllib.algorithms.dqn import DQNConfig
    from ray.rllib.algorithms.impala import IMPALAConfig
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.algorithms.sac import SACConfig

    classes = {"PPO": PPOConfig, "APPO": APPOConfig, "IMPALA": IMPALAConfig, "BC": BCConfig}
    return (classes | {"DQN": DQNConfig, "SAC": SACConfig})[algo]


def _learner_class(algo: str, *, bc: bool = False) -> type:
    from rl_platform.learners import guarded
    from rl_platform.learners.ppo import PlatformPPOLearner

    if bc and algo == "PPO":
        from rl_platform.learners.bc_ppo import BCPPOLearner

        return BCPPOLearner
    if algo == "BC":
        from rl_platform.bc.offline_learner import GuardedBCLearner

        return GuardedBCLearner

    classes = {"PPO": PlatformPPOLearner, "APPO": guarded.GuardedAPPOLearner}
    classes |= {"IMPALA": guarded.GuardedIMPALALearner, "DQN": guarded.GuardedDQNLearner}
    return (classes | {"SAC": guarded.GuardedSACLearner})[algo]


def _ppo_family_training(t: PPOTraining, algo: str) -> dict[str, Any]:
    minibatch, epochs, lr = t.minibatch_size, t.num_epochs, t.lr
    if t.auto_scale:
        scaled = auto_scale_batch(
            train_batch_size=t.train_batch_size,
            minibatch_size=t.minibatch_size,
            num_epochs=t.num_epochs,
            lr=t.lr,
            target_minibatch=t.auto_scale_targets.target_minibatch,
            target_grad_steps=t.auto_scale_targets.target_grad_steps,
            min_epochs=t.auto_scale_targets.min_epochs,
        )
        minibatch, epochs, lr = scaled.minibatch_size, scaled.num_epochs, scaled.lr
        logger.info(
            "auto_scale: minibatch_size={} num_epochs={} lr={:.3g} ({} gradient steps/iteration)",
            minibatch,
            epochs,
            lr,
            scaled.grad_steps,
        )
    kwargs: dict[str, Any] = {
        "lr": lr,
        "gamma": t.gamma,
        "train_batch_size_per_learner": t.train_batch_size,
        "minibatch_size": minibatch,
        "num_epochs": epochs,
        "grad_clip": t.grad_clip,
        "vf_loss_coeff": t.vf_loss_coeff,
        "entropy_coeff": t.entropy_coeff,
    }
    if algo == "PPO":
        kwargs |= {
            "lambda_": t.lambda_,
            "clip_param": t.clip_param,
            "vf_clip_param": t.vf_clip_param,
            "use_kl_loss": t.use_kl_loss,
            "kl_coeff": t.kl_coeff,
        }
    elif algo == "APPO":
        kwargs |= {"lambda_": t.lambda_, "clip_param": t.clip_param, "use_kl_loss": t.use_kl_loss}
    return kwargs


def _replay_training(t: DQNTraining | SACTraining) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "gamma": t.gamma,
        "train_batch_size_per_learner": t.train_batch_size,
        "grad_clip": t.grad_clip,
        "n_step": t.n_step,
        "num_steps_sampled_before_learning_starts": t.num_steps_sampled_before_learning_starts,
        "replay_buffer_config": {
            "type": "PrioritizedEpisodeReplayBuffer",
            "capacity": t.replay_capacity,
        },
    }
    if isinstance(t, DQNTraining):
        kwargs |= {
            "lr": t.lr,
            "target_network_update_freq": t.target_network_update_freq,
            "double_q": t.double_q,
            "dueling": t.dueling,
            "epsilon": [(0, 1.0), (t.epsilon_timesteps, t.final_epsilon)],
            "training_intensity": t.training_intensity,
        }
    else:
        kwargs |= {
            "actor_lr": t.actor_lr,
            "critic_lr": t.critic_lr,
            "alpha_lr": t.alpha_lr,
            "tau": t.tau,
            "initial_alpha": t.initial_alpha,
            "twin_q": t.twin_q,
        }
    return kwargs


def _masked_mlp_spec(spec: ExperimentSpec) -> RLModuleSpec | None:
    """Our masking MLP for envs observing RLlib's action-masking Dict, which RLlib's catalog
    cannot encode ("No default encoder config for obs space=Dict(...)"); None for Box envs,
    which keep RLlib's stock module (same runs, same checkpoints as before)."""
    from rl_platform.envs.registry import agent_observation_spaces
    from rl_platform.modules import mlp_module_class_for

    module_class = mlp_module_class_for(agent_observation_spaces(spec.env))
    if module_class is None:
        return None
    if spec.algo not in MASKED_MLP_ALGOS:
        raise SpecError(
            [
                f"model.type {spec.model.type}: env {spec.env.id!r} masks actions, which our "
                f"masked MLP supports for {', '.join(MASKED_MLP_ALGOS)}, not {spec.algo}"
            ],
            source="model",
        )
    return RLModuleSpec(module_class=module_class, model_config=dict(spec.model.settings))


def _module_spec(spec: ExperimentSpec) -> RLModuleSpec:
    model = spec.model
    if model.type in ("default", "mlp"):
        if "atari" in spec.env.wrappers:
            return RLModuleSpec(
                model_config=DefaultModelConfig(
                    conv_filters=[[16, 4, 2], [32, 4, 2], [64, 4, 2], [128, 4, 2]],
                    conv_activation="relu",
                    head_fcnet_hiddens=list(model.hidden),
                    vf_share_layers=True,
                )
            )
        masked = _masked_mlp_spec(spec)
        if masked is not None:
            return masked
        model_config = DefaultModelConfig(
            fcnet_hiddens=list(model.hidden),
            fcnet_activation=model.activation,
            vf_share_layers=model.vf_share_layers,
        )
        return RLModuleSpec(model_config=model_config)
    from rl_platform.modules import module_class_for

    return RLModuleSpec(
        module_class=module_class_for(model.type), model_config=dict(model.settings)
    )


def _keep_states_across_cuts(config: AlgorithmConfig, spec: ExperimentSpec) -> AlgorithmConfig:
    """Stateful modules on cut multi-agent episodes (ray-project/ray#60205, see
    rl_platform/connectors/state_lookback.py): a lookback long enough for turn-taking agents,
    and a learner piece for chunks that still start without a previous state."""
    from rl_platform.connectors.state_lookback import FillStateLookback, lookback_horizon_for_turns

    if spec.env.id.startswith(TURN_BASED_PREFIX):
        horizon = lookback_horizon_for_turns(TURN_BASED_PLAYERS)
        config = config.env_runners(
            episode_lookback_horizon=max(config.episode_lookback_horizon, horizon)
        )
    # The class is the `(obs_space, action_space) -> ConnectorV2` callable RLlib expects; RLlib
    # puts it before its default pieces, i.e. before AddStatesFromEpisodesToBatch reads the
    # lookback.
    return config.training(learner_connector=FillStateLookback)


def _apply_modules(config: AlgorithmConfig, spec: ExperimentSpec) -> AlgorithmConfig:
    module_spec = _module_spec(spec)
    if spec.model.type == "transformer_lstm":
        from rl_platform.modules import history_connector_for

        connector = history_connector_for(
            dict(spec.model.settings), multi_agent=is_multi_agent(spec.env.id)
        )
        config = config.env_runners(env_to_module_connector=connector)
    if not is_multi_agent(spec.env.id):
        return config.rl_module(rl_module_spec=module_spec)
    if spec.model.type in STATEFUL_MODEL_TYPES:
        config = _keep_states_across_cuts(config, spec)
    # Without a league, every agent shares one learning module (naive self-play).
    config = config.multi_agent(
        policies={MAIN_MODULE_ID},
        policy_mapping_fn=lambda agent_id, episode, **kwargs: MAIN_MODULE_ID,
    )
    return config.rl_module(
        rl_module_spec=MultiRLModuleSpec(rl_module_specs={MAIN_MODULE_ID: module_spec})
    )


def _apply_resources(config: AlgorithmConfig, spec: ExperimentSpec) -> AlgorithmConfig:
    res = spec.resources
    device = resolve_device(res.device)
    gpus = res.gpus_per_learner
    if device == "cuda" and gpus == 0:
        gpus = 1.0
    elif device != "cuda":
        if device == "mps":
            logger.warning("RLlib 2.60 learners run on CUDA or CPU; MPS requested, using CPU")
        gpus = 0.0
    logger.info("learner device: {} (gpus_per_learner={})", "cuda" if gpus else "cpu", gpus)
    config = config.learners(
        num_learners=res.learners,
        num_gpus_per_learner=gpus,
        learner_class=_learner_class(spec.algo, bc=spec.bc is not None),
    )
    # Every learner class above checks gradients once in FiniteUpdateGuard and skips the
    # step on NaN/Inf; RLlib's own checks (two more passes over every gradient per step,
    # ~6% of a duel PPO update) are then redundant.
    return config.framework(torch_skip_nan_gradients=True)


def build_algorithm_config(
    spec: ExperimentSpec, *, extensions: list[ConfigExtension] | None = None
) -> AlgorithmConfig:
    """Translate the spec; `extensions` (league, BC, metrics callbacks) refine the result."""
    config = _config_class(spec.algo)()
    training = spec.training
    if isinstance(training, PPOTraining):
        train_kwargs = _ppo_family_training(training, spec.algo)
    elif isinstance(training, BCTraining):
        from rl_platform.bc.offline import bc_training_kwargs

        train_kwargs = bc_training_kwargs(training)
    else:
        train_kwargs = _replay_training(training)
    config = (
        config.environment(env=registered_env_name(spec.env), env_config=dict(spec.env.kwargs))
        .env_runners(
            num_env_runners=spec.resources.env_runners,
            num_envs_per_env_runner=spec.env.envs_per_runner,
            num_cpus_per_env_runner=spec.resources.cpus_per_env_runner,
            gym_env_vectorize_mode=spec.env.vectorize_mode,
        )
        .training(**train_kwargs)
        .fault_tolerance(
            restart_failed_env_runners=True,
            max_num_env_runner_restarts=3,
            delay_between_env_runner_restarts_s=0.0,
        )
        .reporting(metrics_num_episodes_for_smoothing=100)
        .debugging(seed=spec.seed, log_level="WARN")
    )
    config = _apply_resources(config, spec)
    config = _apply_modules(config, spec)
    if is_multi_agent(spec.env.id):
        config = vector_runner_extension(config, spec)
    for extend in extensions or []:
        config = extend(config, spec)
    # After the caller's extensions, which may replace the callbacks (BC appends its own).
    from rl_platform.bc.extension import bc_extension

    return bc_extension(config, spec)
