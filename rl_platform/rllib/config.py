"""The one place that turns an `ExperimentSpec` into a stock RLlib `AlgorithmConfig`.

New API stack only (RLModule, Learner, ConnectorV2, EnvRunner); no subclassing of
`AlgorithmConfig` or `Algorithm`. The RLModule comes from `module_spec_for` (shared with
policy loading); league and BC wiring are extensions the caller hands in.
"""

from collections.abc import Callable, Sequence
from typing import Any

from loguru import logger
from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.connectors.env_to_module.mean_std_filter import MeanStdFilter
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

from rl_platform.base.batch_scaling import auto_scale_batch
from rl_platform.connectors.hide_features import with_hidden_features
from rl_platform.connectors.scale_rewards import reward_scaler
from rl_platform.connectors.state_lookback import FillStateLookback, lookback_horizon_for_turns
from rl_platform.env_adapters.registry import registered_env_name
from rl_platform.learners import CAPTURE_UPDATE_KEY, DECOUPLED_KEY
from rl_platform.learners.device import learner_gpus
from rl_platform.modules import history_connector_for
from rl_platform.rllib.algorithms import algorithm_config_class, learner_class
from rl_platform.rllib.facts import RunFacts, run_facts
from rl_platform.rllib.off_policy import off_policy_extension
from rl_platform.rllib.rl_module_spec import module_spec_for
from rl_platform.rllib.runner_extension import vector_runner_extension
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.training import BCTraining, DQNTraining, PPOTraining, SACTraining

# PettingZoo AEC games: one agent acts per env step. Every such game in the catalog
# (rl_platform/envs/catalog.py) is a two-player game.
TURN_BASED_PREFIX = "pettingzoo/"
TURN_BASED_PLAYERS = 2
ConfigExtension = Callable[[AlgorithmConfig, ExperimentSpec], AlgorithmConfig]


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
        # RLlib's optimizer scheduler: [[env steps, lr], ...], linear in between.
        "lr": [list(point) for point in t.lr_schedule] if t.lr_schedule else lr,
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
            # None: no clip; RLlib clamps the squared error at this value, so inf never clips.
            "vf_clip_param": float("inf") if t.vf_clip_param is None else t.vf_clip_param,
            "use_kl_loss": t.use_kl_loss,
            "kl_coeff": t.kl_coeff,
        }
    elif algo == "APPO":
        kwargs |= {"lambda_": t.lambda_, "clip_param": t.clip_param, "use_kl_loss": t.use_kl_loss}
    return kwargs


def _bc_training(training: BCTraining) -> dict[str, Any]:
    """`algo: BC` (offline, `rl_platform.bc.offline`)."""
    return {
        "lr": training.lr,
        "gamma": training.gamma,
        "train_batch_size_per_learner": training.train_batch_size,
        "grad_clip": training.grad_clip,
    }


REPLAY_BUFFERS = {
    "prioritized": "PrioritizedEpisodeReplayBuffer",
    "uniform": "EpisodeReplayBuffer",
}


def _replay_training(t: DQNTraining | SACTraining) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "gamma": t.gamma,
        "train_batch_size_per_learner": t.train_batch_size,
        "grad_clip": t.grad_clip,
        "n_step": t.n_step,
        "num_steps_sampled_before_learning_starts": t.num_steps_sampled_before_learning_starts,
        # A new type replaces RLlib's whole buffer config (prioritized keeps its alpha/beta).
        "replay_buffer_config": {"type": REPLAY_BUFFERS[t.replay], "capacity": t.replay_capacity},
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


def _keep_states_across_cuts(config: AlgorithmConfig, spec: ExperimentSpec) -> AlgorithmConfig:
    """Stateful modules on cut multi-agent episodes (ray-project/ray#60205, see
    rl_platform/connectors/state_lookback.py): a lookback long enough for turn-taking agents
    (the learner piece for chunks that still start without a state: `_learner_pieces`)."""
    if spec.env.id.startswith(TURN_BASED_PREFIX):
        horizon = lookback_horizon_for_turns(TURN_BASED_PLAYERS)
        config = config.env_runners(
            episode_lookback_horizon=max(config.episode_lookback_horizon, horizon)
        )
    return config


def _learner_pieces(
    config: AlgorithmConfig, spec: ExperimentSpec, facts: RunFacts
) -> AlgorithmConfig:
    """Our learner connector pieces, in order; RLlib puts them before its default pieces
    (after PPO's AddOneTsToEpisodesAndTruncate, which its learner prepends)."""
    pieces: list[Callable[..., Any]] = []
    if facts.multi_agent and facts.model.stateful:
        # A class is the `(obs_space, action_space) -> ConnectorV2` callable RLlib expects;
        # it runs before AddStatesFromEpisodesToBatch reads the lookback.
        pieces.append(FillStateLookback)
    if getattr(spec.training, "normalize_rewards", False):
        pieces.append(reward_scaler(spec.training.gamma))
    if not pieces:
        return config

    def factory(*args: Any, **kwargs: Any) -> list[Any]:
        return [piece(*args, **kwargs) for piece in pieces]

    return config.learners(learner_connector=factory)


def _observation_pieces(spec: ExperimentSpec, *, multi_agent: bool) -> Callable[..., Any] | None:
    """`env.observation_filter: mean_std`: RLlib's MeanStdFilter (clip 10), first of the
    env-to-module pieces (single-agent envs; the array runner is refused at validation)."""
    if spec.env.observation_filter == "none":
        return None

    def factory(env: Any = None, spaces: Any = None, device: Any = None) -> list[Any]:
        return [MeanStdFilter(multi_agent=multi_agent)]

    return factory


def _apply_modules(
    config: AlgorithmConfig, spec: ExperimentSpec, facts: RunFacts
) -> AlgorithmConfig:
    module_spec = module_spec_for(spec)
    connector = _observation_pieces(spec, multi_agent=facts.multi_agent)
    if (history := facts.model.opponent_history) is not None:
        connector = history_connector_for(history, multi_agent=facts.multi_agent)
    # `env.hide` (the array runner applies it in its own model inputs; RLlib's runner here).
    connector = with_hidden_features(spec.env.hidden_view(), connector)
    if connector is not None:
        config = config.env_runners(env_to_module_connector=connector)
    if not facts.multi_agent:
        return config.rl_module(rl_module_spec=module_spec)
    if facts.model.stateful:
        config = _keep_states_across_cuts(config, spec)
    # Without a league, every agent shares one learning module (naive self-play).
    (trained,) = facts.trained_module_ids
    config = config.multi_agent(
        policies={trained},
        policy_mapping_fn=lambda agent_id, episode, **kwargs: trained,
    )
    return config.rl_module(
        rl_module_spec=MultiRLModuleSpec(rl_module_specs={trained: module_spec})
    )


def _apply_resources(config: AlgorithmConfig, spec: ExperimentSpec) -> AlgorithmConfig:
    res = spec.resources
    config = config.env_runners(
        num_env_runners=res.env_runners,
        num_cpus_per_env_runner=res.cpus_per_env_runner,
        sample_timeout_s=res.sample_timeout_s,
        custom_resources_per_env_runner=dict(res.custom_resources_per_env_runner),
    ).learners(
        num_learners=res.learners,
        num_gpus_per_learner=learner_gpus(res),
        custom_resources_per_learner=dict(res.custom_resources_per_learner),
        learner_class=learner_class(spec),
        learner_config_dict={
            **config.learner_config_dict,
            CAPTURE_UPDATE_KEY: res.cuda_graphs,
            DECOUPLED_KEY: res.overlap,
        },
    )
    # Every learner class above checks gradients once in FiniteUpdateGuard and skips the
    # step on NaN/Inf; RLlib's own checks (two more passes over every gradient per step,
    # ~6% of a duel PPO update) are then redundant.
    return config.framework(torch_skip_nan_gradients=True)


def build_algorithm_config(
    spec: ExperimentSpec,
    *,
    facts: RunFacts | None = None,
    extensions: Sequence[ConfigExtension] = (),
) -> AlgorithmConfig:
    """Translate the spec; then each of `extensions` (metrics callbacks, league, BC: the
    caller's choice, see `rl_platform.run.algorithm_build`) refines the result, in order.
    `facts`: the run's facts as its entry point resolved them; a caller with the spec alone
    (a test, a benchmark) leaves them to be resolved here, once."""
    if facts is None:
        facts = run_facts(spec)  # the config builder's entry (docs/architecture.md)
    config = algorithm_config_class(spec.algo)()
    training = spec.training
    if isinstance(training, PPOTraining):
        train_kwargs = _ppo_family_training(training, spec.algo)
    elif isinstance(training, BCTraining):
        train_kwargs = _bc_training(training)
    else:
        train_kwargs = _replay_training(training)
    config = (
        config.environment(env=registered_env_name(spec.env), env_config=dict(spec.env.kwargs))
        .env_runners(
            num_envs_per_env_runner=spec.env.envs_per_runner,
            gym_env_vectorize_mode=spec.env.vectorize_mode,
        )
        .training(**train_kwargs)
        .fault_tolerance(
            restart_failed_env_runners=True,
            max_num_env_runner_restarts=3,
            delay_between_env_runner_restarts_s=0.0,
        )
        .reporting(metrics_num_episodes_for_smoothing=100)
        .debugging(seed=facts.seeds.root, log_level="WARN")
    )
    config = _apply_resources(config, spec)
    config = _apply_modules(config, spec, facts)
    config = _learner_pieces(config, spec, facts)
    if facts.multi_agent:
        config = vector_runner_extension(config, spec, facts=facts)
    for extend in extensions:
        config = extend(config, spec)
    # Last: its callback joins those the extensions set (the metrics extension replaces them).
    return off_policy_extension(config, spec, facts=facts)
