"""Which learner path a spec gets: `training.learner: auto | array | rllib` (pure, no Ray).

The array learner (rl_platform/learners/array_ppo.py) trains PPO straight from the array
runner's fixed-shape rollouts. It serves what it has been written and tested for: PPO on the
array runner, a simultaneous-move game (every seat acts at every step, so a seat row's next
step is its next observation), a stateless model or a recurrent one whose critic reads the
observation (`critic_input: observation`: the bootstrap value needs no memory) and that has
no auxiliary loss, BC without a label replay (`bc.replay`), and at most one learner process.
Anything else learns through RLlib's learner connectors, as before; asking for `array` where
it cannot serve is refused in one line naming the key.

For SAC and DQN the array path (docs/off_policy.md) is a lean acting loop in the driver that
writes a fixed-shape replay store, and the update steps of rl_platform/learners/sac_step.py
and dqn_step.py. It serves single-agent envs without an observation filter, with the `mlp`
model, in the driver (no remote env runner or learner).
"""

from dataclasses import dataclass
from typing import Literal

from rl_platform.envs.env_info import EnvFacts


@dataclass(frozen=True)
class LearnerChoice:
    kind: Literal["array", "rllib"]
    reason: str


@dataclass(frozen=True)
class LearnerFacts:
    """What the choice reads of a spec (`ExperimentSpec.learner_choice` fills it)."""

    runner: str
    env: EnvFacts
    algo: str
    model_type: str
    stateful: bool
    off_policy_nets: bool = False
    """The model type's nets serve the off-policy array path (`ModelTypeSpec.off_policy_nets`)."""
    memory_critic: bool = False
    loss_terms: tuple[str, ...] = ()
    """The model keys that add a loss term (`ModelTypeSpec.loss_terms`): the array learner's
    step computes PPO and BC only (rl_platform/learners/update_step.py)."""
    bc_replay: bool = False
    """`bc.replay` is set (a BC-only step after each minibatch, on replayed labels)."""
    learners: int = 0
    env_runners: int = 0
    observation_filter: str = "none"
    wrappers: tuple[str, ...] = ()


OFF_POLICY_ALGOS = ("SAC", "DQN")


def _off_policy_blocker(facts: LearnerFacts) -> str | None:
    """Why the off-policy array path cannot train this spec, or None if it can."""
    if facts.env.multi_agent:
        return f"env {facts.env.env_id!r} is multi-agent"
    if not facts.off_policy_nets:
        return f"model.type {facts.model_type} is not mlp"
    if facts.observation_filter != "none":
        return f"env.observation_filter {facts.observation_filter} is an RLlib connector"
    if "atari" in facts.wrappers:
        return "env.wrappers atari gives image observations"
    if facts.learners > 0:
        return f"resources.learners {facts.learners} > 0 (it learns in the driver)"
    if facts.env_runners > 0:
        return f"resources.env_runners {facts.env_runners} > 0 (it acts in the driver)"
    return None


def _blocker(facts: LearnerFacts) -> str | None:
    """Why the array learner cannot train this spec, or None if it can."""
    if facts.algo in OFF_POLICY_ALGOS:
        return _off_policy_blocker(facts)
    if facts.runner != "vector":
        return "its samples come from RLlib's runner (env.runner)"
    if facts.algo != "PPO":
        return f"algo {facts.algo} is not PPO"
    if facts.env.turn_based:
        return f"env {facts.env.env_id!r} is turn-based"
    if facts.stateful and facts.memory_critic:
        return f"model.type {facts.model_type} has critic_input: memory"
    if facts.loss_terms:
        return f"model.{facts.loss_terms[0]} adds a loss term the array learner does not compute"
    if facts.bc_replay:
        return "bc.replay keeps a label replay"
    if facts.learners > 1:
        return f"resources.learners {facts.learners} > 1"
    return None


def choose_learner(*, requested: str, facts: LearnerFacts) -> LearnerChoice:
    """Resolve `training.learner`; raises ValueError when `array` is asked for and impossible."""
    if requested == "rllib":
        return LearnerChoice("rllib", "training.learner: rllib")
    blocker = _blocker(facts)
    if blocker is None and facts.algo in OFF_POLICY_ALGOS:
        return LearnerChoice("array", f"{facts.algo} on a fixed-shape replay store")
    if blocker is None:
        return LearnerChoice("array", "PPO on the array runner's fixed-shape rollouts")
    if requested == "array":
        raise ValueError(
            f"training.learner array cannot train this spec: {blocker}; use training.learner "
            "auto or rllib"
        )
    return LearnerChoice("rllib", blocker)
