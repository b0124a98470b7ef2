"""What the array env runner needs besides RLlib's config (no Ray): bound into a
`VectorEnvRunner` subclass by rl_platform/rllib/runner_extension.py, since RLlib builds runners from
the class alone, locally and in remote actors."""

from dataclasses import dataclass
from typing import Any

from rl_platform.envs.hidden_view import HiddenView
from rl_platform.spec.model_type import OpponentHistoryInputs


@dataclass(frozen=True)
class VectorRunnerSettings:
    """What the runner needs besides RLlib's config (bound into a subclass)."""

    env_id: str
    game_factory: str
    """`module:attribute` of a `VectorGame` class taking `(num_games, **kwargs)`."""
    game_kwargs: dict[str, Any]
    seed: int | None
    history: OpponentHistoryInputs | None = None
    """The model's opponent-history window (its type's `opponent_history()`), if it reads one."""
    opponent_actions: bool = False
    """The model learns to infer the opponent's actions (its type's `opponent_actions_key()`):
    record them per step."""
    acting_device: str = "cpu"
    """Where the torch modules act and the seats' recurrent states live (`cpu`, `cuda`)."""
    cuda_graphs: bool = True
    """On CUDA, replay each module's acting step as a captured CUDA graph."""
    hidden: HiddenView | None = None
    """Features the torch modules do not see (`env.hide`); scripted seats see them."""
    array_learner: bool = False
    """Training samples go to the array learner as `RolloutBatch`es, not episodes
    (`training.learner`, rl_platform/spec/learner_choice.py)."""
    overlap: bool = False
    """Act on the next training batch while the learner updates on this one
    (`resources.overlap`, rl_platform/sampling/overlap.py)."""
