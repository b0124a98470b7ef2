"""Which learner path a spec gets: `training.learner: auto | array | rllib` (pure, no Ray).

The array learner (rl_platform/learners/array_ppo.py) trains PPO straight from the array
runner's fixed-shape rollouts. It serves what it has been written and tested for: PPO on the
array runner, a simultaneous-move game (every seat acts at every step, so a seat row's next
step is its next observation), a stateless model or a recurrent one whose critic reads the
observation (`critic_input: observation`: the bootstrap value needs no memory) and that has
no auxiliary loss, no `bc:` block, and at most one learner process. Anything else learns
through RLlib's learner connectors, as before; asking for `array` where it cannot serve is
refused in one line naming the key.
"""

from dataclasses import dataclass
from typing import Literal

from rl_platform.envs.env_info import EnvFacts


@dataclass(frozen=True)
class LearnerChoice:
    kind: Literal["array", "rllib"]
    reason: str


def _blocker(
    *,
    runner: str,
    env: EnvFacts,
    algo: str,
    model_type: str,
    stateful: bool,
    memory_critic: bool,
    auxiliary: str | None,
    has_bc: bool,
    learners: int,
) -> str | None:
    """Why the array learner cannot train this spec, or None if it can."""
    if runner != "vector":
        return "its samples come from RLlib's runner (env.runner)"
    if algo != "PPO":
        return f"algo {algo} is not PPO"
    if env.turn_based:
        return f"env {env.env_id!r} is turn-based"
    if stateful and memory_critic:
        return f"model.type {model_type} has critic_input: memory"
    if auxiliary is not None:
        return f"model.{auxiliary} adds an auxiliary loss"
    if has_bc:
        return "the spec has a bc: block"
    if learners > 1:
        return f"resources.learners {learners} > 1"
    return None


def choose_learner(
    *,
    requested: str,
    runner: str,
    env: EnvFacts,
    algo: str,
    model_type: str,
    stateful: bool,
    memory_critic: bool = False,
    auxiliary: str | None = None,
    has_bc: bool,
    learners: int,
) -> LearnerChoice:
    """Resolve `training.learner`; raises ValueError when `array` is asked for and impossible."""
    if requested == "rllib":
        return LearnerChoice("rllib", "training.learner: rllib")
    blocker = _blocker(
        runner=runner,
        env=env,
        algo=algo,
        model_type=model_type,
        stateful=stateful,
        memory_critic=memory_critic,
        auxiliary=auxiliary,
        has_bc=has_bc,
        learners=learners,
    )
    if blocker is None:
        return LearnerChoice("array", "PPO on the array runner's fixed-shape rollouts")
    if requested == "array":
        raise ValueError(
            f"training.learner array cannot train this spec: {blocker}; use training.learner "
            "auto or rllib"
        )
    return LearnerChoice("rllib", blocker)
