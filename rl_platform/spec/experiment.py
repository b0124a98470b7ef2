"""The top-level experiment spec: one YAML file is one `ExperimentSpec`."""

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from rl_platform.base.errors import UserError
from rl_platform.spec.base import Integer, SpecModel
from rl_platform.spec.bc import BCSpec
from rl_platform.spec.evaluation import EvaluationSpec
from rl_platform.spec.league import LeagueSpec
from rl_platform.spec.learner_choice import LearnerChoice, LearnerFacts, choose_learner
from rl_platform.spec.model import ModelSpec
from rl_platform.spec.model_types.mlp import MLPModelSpec
from rl_platform.spec.runner_choice import RunnerChoice, choose_runner
from rl_platform.spec.search import Distribution, SearchSpec
from rl_platform.spec.search_paths import canonical_param_path
from rl_platform.spec.sections import (
    CheckpointSpec,
    EnvSpec,
    HealthSpec,
    LoggingSpec,
    ResourcesSpec,
    StopSpec,
)
from rl_platform.spec.training import PPOTraining, TrainingSpec
from rl_platform.teachers import check_scripted_names
from rl_platform.utils.names import is_safe_name
from rl_platform.utils.seed_bounds import SEED_LIMIT

AlgoName = Literal["PPO", "APPO", "IMPALA", "DQN", "SAC", "BC"]
BUDGET_SECTIONS = ("stop", "checkpoint", "resources", "env")
PROFILE_ENV_KEYS = ("envs_per_runner",)
"""The env keys a profile may set: how many games each runner steps, the machine layout
(with `resources.env_runners`), so that a profile can keep the games x steps of a batch."""


class ProfileSpec(SpecModel):
    """A named set of budget overrides (`--profile NAME`); hyperparameters are never touched."""

    stop: dict[str, Any] = {}
    """Overrides for `stop` keys."""
    checkpoint: dict[str, Any] = {}
    """Overrides for `checkpoint` keys."""
    resources: dict[str, Any] = {}
    """Overrides for `resources` keys."""
    env: dict[str, Any] = {}
    """Overrides for `env.envs_per_runner` (the layout; no other env key)."""

    @model_validator(mode="after")
    def _keys_exist(self) -> "ProfileSpec":
        sections = {"stop": StopSpec, "checkpoint": CheckpointSpec, "resources": ResourcesSpec}
        unknown = set(self.env) - set(PROFILE_ENV_KEYS)
        if unknown:
            raise ValueError(
                f"unknown env key(s) {sorted(unknown)}; a profile may set {list(PROFILE_ENV_KEYS)}"
            )
        for section, model in sections.items():
            unknown = set(getattr(self, section)) - set(model.model_fields)
            if unknown:
                raise ValueError(
                    f"unknown {section} key(s) {sorted(unknown)}; "
                    f"allowed: {sorted(model.model_fields)}"
                )
        return self


def _searchable_path(path: str) -> str:
    # ExperimentSpec is defined below; the check runs at validation time, when it exists.
    return canonical_param_path(path, schema=ExperimentSpec)


class ExperimentSearchSpec(SearchSpec):
    """The `search:` block, its `params` paths checked against this schema (and respelled)."""

    params: dict[Annotated[str, AfterValidator(_searchable_path)], Distribution] = Field(
        min_length=1
    )
    """Dotted spec path -> distribution, e.g. `training.lr: {loguniform: [1e-4, 1e-3]}`."""


class ExperimentSpec(SpecModel):
    """A complete, validated experiment."""

    name: str
    """Experiment name; becomes a folder name, so letters, digits, '.', '_', '-' only."""
    algo: AlgoName = "PPO"
    """RLlib algorithm."""
    seed: Integer | None = Field(default=0, ge=0, lt=SEED_LIMIT)
    """Seed for RLlib, torch and the envs (0 <= seed < 2**32); None for a random seed."""
    env: EnvSpec
    """The environment."""
    training: TrainingSpec = PPOTraining()
    """Algorithm hyperparameters; which keys exist depends on `algo`."""
    model: ModelSpec = MLPModelSpec()
    """The network."""
    resources: ResourcesSpec = ResourcesSpec()
    """Env runners, learners, GPUs, device."""
    stop: StopSpec = StopSpec(iterations=100)
    """Stop conditions (first reached wins)."""
    checkpoint: CheckpointSpec = CheckpointSpec()
    """Checkpoint cadence and retention."""
    logging: LoggingSpec = LoggingSpec()
    """Metric sinks."""
    health: HealthSpec = HealthSpec()
    """Health checks (entropy collapse, NaN)."""
    evaluation: EvaluationSpec | None = None
    """Evaluate the trained policy every N env steps while training (docs/training.md)."""
    league: LeagueSpec | None = None
    """Self-play league (two-player envs only); see docs/league.md. None: no league."""
    search: ExperimentSearchSpec | None = None
    """Hyperparameter search (`rlp search`, docs/search.md); `rlp train` ignores it."""
    bc: BCSpec | None = None
    """Behaviour cloning from a teacher on top of PPO (docs/bc.md). None: no BC."""
    init_from: str | None = None
    """Run or checkpoint folder whose main-module weights start this run (docs/bc.md)."""
    profiles: dict[str, ProfileSpec] = {}
    """Named budget overrides; every experiment file declares at least `smoke`."""
    vars: dict[str, Any] = {}
    """Free variables for `${vars.NAME}` interpolation."""

    @model_validator(mode="before")
    @classmethod
    def _route_training_by_algo(cls, data: Any) -> Any:
        """Tell the training union which model applies: the one of the top-level `algo`."""
        if isinstance(data, dict):
            algo = data.get("algo", "PPO")
            training = data.get("training")
            if training is None:
                training = {}
            if isinstance(training, dict) and isinstance(algo, str):
                data = {**data, "training": {**training, "algo": algo}}
        return data

    @model_validator(mode="after")
    def _replay_on_one_learner(self) -> "ExperimentSpec":
        # Each DDP learner replays its own shard's labels; one with no labelled rows yet
        # would skip steps the others all-reduce, and the update would hang.
        if self.bc is not None and self.bc.replay is not None and self.resources.learners > 1:
            raise ValueError(
                f"bc.replay needs a single learner, got resources.learners="
                f"{self.resources.learners}; set resources.learners to 0 or 1 (one GPU learner "
                "is fine) or remove bc.replay"
            )
        return self

    @model_validator(mode="after")
    def _run_teachers_exist(self) -> "ExperimentSpec":
        if self.bc is not None:
            every = self.evaluation.every_env_steps if self.evaluation is not None else None
            self.bc.check_this_run_teachers(first_evaluation=every)
        return self

    @model_validator(mode="after")
    def _evaluation_fits(self) -> "ExperimentSpec":
        if self.stop.eval and self.evaluation is None:
            raise ValueError(
                f"stop.eval {self.stop.eval} needs an `evaluation:` block, e.g. "
                "evaluation: {every_env_steps: 50000, episodes: 100}"
            )
        opponents = self.evaluation.opponents if self.evaluation is not None else []
        if opponents and not self.env.facts().multi_agent:
            raise ValueError(
                f"evaluation.opponents applies to two-player envs; {self.env.id} is "
                "single-agent (leave it empty)"
            )
        scripted = [self.scripted_agent(n) for n in opponents if "://" not in n and n != "random"]
        try:
            check_scripted_names(env_id=self.env.id, names=scripted)
        except UserError as err:
            raise ValueError(f"evaluation.opponents: {err}") from None
        return self

    @model_validator(mode="after")
    def _history_split_given(self) -> "ExperimentSpec":
        history = self.model.opponent_history()
        if history is not None and history.obs_split is None:
            raise ValueError(
                f"model.obs_split is required for {self.model.type}, e.g. "
                "{self: [0, 32], opponent: [32, 64]} or {self: <key>, opponent: <key>}"
            )
        return self

    @model_validator(mode="after")
    def _runner_fits(self) -> "ExperimentSpec":
        try:
            self.runner_choice()
        except ValueError as err:
            raise ValueError(str(err)) from None
        return self

    @model_validator(mode="after")
    def _learner_fits(self) -> "ExperimentSpec":
        try:
            self.learner_choice()
        except ValueError as err:
            raise ValueError(str(err)) from None
        return self

    @model_validator(mode="after")
    def _overlap_fits(self) -> "ExperimentSpec":
        if self.resources.overlap and self.runner_choice().kind != "vector":
            raise ValueError(
                "resources.overlap acts in the array runner, and this spec runs on RLlib's "
                f"runner ({self.runner_choice().reason}); set resources.overlap: false"
            )
        return self

    @model_validator(mode="after")
    def _normalisers_fit(self) -> "ExperimentSpec":
        # Both are RLlib connector pieces: the array runner and the array learner have none.
        if self.env.observation_filter != "none" and self.model.opponent_history() is not None:
            raise ValueError(
                f"env.observation_filter {self.env.observation_filter} and model.type "
                f"{self.model.type}'s opponent history are two env-to-module pipelines; pick one"
            )
        if self.env.observation_filter != "none" and self.runner_choice().kind == "vector":
            raise ValueError(
                f"env.observation_filter {self.env.observation_filter} is an RLlib env-runner "
                "connector, and this spec runs on the array runner; set env.runner: rllib or "
                "env.observation_filter: none"
            )
        scaled = getattr(self.training, "normalize_rewards", False)
        if scaled and self.learner_choice().kind == "array":
            raise ValueError(
                "training.normalize_rewards is an RLlib learner connector, and this spec "
                "trains on the array learner; set training.learner: rllib"
            )
        return self

    @model_validator(mode="after")
    def _acting_device_fits(self) -> "ExperimentSpec":
        if self.resources.acting_device == "cpu":
            return self
        runner = self.runner_choice()
        if runner.kind != "vector":
            raise ValueError(
                "resources.acting_device cuda acts in the array runner, and this spec runs on "
                f"RLlib's runner ({runner.reason}); set resources.acting_device: cpu"
            )
        if self.resources.env_runners != 0:
            raise ValueError(
                f"resources.acting_device cuda acts in the driver's env runner, got "
                f"resources.env_runners={self.resources.env_runners}; set env_runners: 0 "
                "(one process acts for all games on the GPU)"
            )
        return self

    @model_validator(mode="after")
    def _opponent_actions_recorded(self) -> "ExperimentSpec":
        key = self.model.opponent_actions_key()
        if key is None:
            return self
        runner = self.runner_choice()  # `_runner_fits` has checked that it resolves
        if runner.kind != "vector":
            raise ValueError(
                f"model.{key} {getattr(self.model, key)} needs the opponent's actions, "
                f"which only the array runner records, and this spec runs on RLlib's runner "
                f"({runner.reason}); set model.{key}: 0 or use an env with a "
                "vectorized game core (docs/modules.md)"
            )
        return self

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        if not is_safe_name(value):
            raise ValueError(
                "must be 1-128 letters, digits, '.', '_', '-' or '+' starting with a letter or "
                "digit (it becomes a folder name)"
            )
        return value

    def runner_choice(self) -> RunnerChoice:
        """Which env runner this spec gets (`env.runner`, rl_platform/spec/runner_choice.py);
        raises ValueError when `vector` is asked for and impossible."""
        return choose_runner(
            requested=self.env.runner,
            env=self.env.facts(),
            algo=self.algo,
            wrappers=list(self.env.wrappers),
        )

    def learner_choice(self) -> LearnerChoice:
        """Which learner path trains this spec (`training.learner`,
        rl_platform/spec/learner_choice.py); raises ValueError when `array` is asked for and
        impossible."""
        facts = LearnerFacts(
            runner=self.runner_choice().kind,
            env=self.env.facts(),
            algo=self.algo,
            model_type=self.model.type,
            stateful=self.model.stateful,
            off_policy_nets=self.model.off_policy_nets,
            memory_critic=getattr(self.model, "critic_input", "observation") == "memory",
            loss_terms=self.model.loss_terms(),
            bc_replay=self.bc is not None and self.bc.replay is not None,
            learners=self.resources.learners,
            env_runners=self.resources.env_runners,
            observation_filter=self.env.observation_filter,
            wrappers=tuple(self.env.wrappers),
        )
        return choose_learner(requested=getattr(self.training, "learner", "rllib"), facts=facts)

    def scripted_agent(self, name: str) -> str:
        """The agent a scripted opponent's name stands for: `league.scripted` may map a name
        to a user's `package.module:act_fn`; any other name is the agent itself."""
        agents = self.league.scripted_agents if self.league is not None else {}
        return agents.get(name, name)

    def dump(self) -> dict[str, Any]:
        """Plain data, YAML-ready, mirroring the file format (no routing keys)."""
        data = self.model_dump(mode="json", by_alias=True)
        data["training"].pop("algo", None)
        return data
