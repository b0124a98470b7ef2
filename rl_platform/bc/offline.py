"""`algo: BC`: behaviour cloning from episodes recorded with `rlp record` (RLlib's BC algorithm).

RLlib's offline stack (ray/rllib/offline/offline_data.py) streams the recorded parquet rows
through its `OfflinePreLearner` (one row = one transition, the columns of
`OfflineSingleAgentEnvRunner` with `output_write_episodes=False`) into `BCTorchLearner`.

The MLP is RLlib's PPO module (not BC's own, see `rl_platform.rllib.rl_module_spec`), so the trained
weights carry PPO's parameter names and a later `init_from:` of a PPO run loads them directly
(BC trains only the policy network; PPO's value head starts fresh). Evaluation:
`training.eval_episodes` greedy episodes per iteration, reported as `bc/eval_return_mean` (BC
samples no episodes of its own).
"""

from pathlib import Path
from typing import Any

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
from ray.rllib.algorithms.bc import BCConfig
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, EVALUATION_RESULTS

from rl_platform.base.errors import UserError
from rl_platform.bc.record import DATA_DIR
from rl_platform.rllib.config_callbacks import with_callback
from rl_platform.rllib.facts import RunFacts
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.training import BCTraining

EVAL_RETURN_KEY = "bc/eval_return_mean"


def dataset_path(training: BCTraining) -> Path:
    """The parquet folder: `dataset` itself, or its `data/` (the layout of `rlp record`)."""
    path = Path(training.dataset).expanduser().resolve()
    if (path / DATA_DIR).is_dir():
        path = path / DATA_DIR
    if not path.is_dir() or not any(path.rglob("*.parquet")):
        raise UserError(
            f"training.dataset: {path} holds no parquet files; record some with "
            "`rlp record TEACHER_URI --env ENV_ID --episodes N --out DIR`"
        )
    return path


class EvalReport(RLlibCallback):
    """Copies the evaluation return into the env-runner section, where the loop reads it."""

    def on_train_result(self, *, result: dict, **kwargs: Any) -> None:
        evaluation = (result.get(EVALUATION_RESULTS) or {}).get(ENV_RUNNER_RESULTS) or {}
        value = evaluation.get("episode_return_mean")
        if value is not None:
            result.setdefault(ENV_RUNNER_RESULTS, {})[EVAL_RETURN_KEY] = float(value)


def offline_bc_config(
    config: AlgorithmConfig, spec: ExperimentSpec, *, facts: RunFacts
) -> AlgorithmConfig:
    """Point RLlib's BC at the dataset; PPO's MLP; greedy evaluation episodes."""
    training = spec.training
    assert isinstance(training, BCTraining)
    if facts.multi_agent:
        raise UserError("algo: BC reads single-agent episodes; RLlib 2.60 has no multi-agent BC")
    config = config.offline_data(
        input_=[dataset_path(training).as_posix()],
        input_read_method="read_parquet",
        map_batches_kwargs={"concurrency": 1, "num_cpus": 1},
        iter_batches_kwargs={"prefetch_batches": 1, "local_shuffle_buffer_size": None},
        dataset_num_iters_per_learner=training.updates_per_iteration,
    )
    if training.eval_episodes > 0:
        config = config.evaluation(
            evaluation_interval=1,
            evaluation_num_env_runners=0,
            evaluation_duration=training.eval_episodes,
            evaluation_duration_unit="episodes",
            evaluation_config=BCConfig.overrides(explore=False),
        )
    return with_callback(config, EvalReport)
