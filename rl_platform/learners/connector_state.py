"""Keep the learner connector's state in the Learner's, so a checkpoint holds it.

RLlib's `Learner.get_state` holds the module, the optimizer and the metrics, but not the
learner connector pipeline (ray/rllib/core/learner/learner.py), while the env runners' pipeline
is checkpointed. A stateful learner piece, `training.normalize_rewards`'s `ScaleRewards`, then
lost its running return statistics on every resume: the resumed run scaled its rewards by a
spread learnt from its first batch again, not as the uninterrupted run. Pieces without state
return none and the pipeline leaves them out, so other runs' checkpoints do not change.
"""

from typing import Any

from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.utils.annotations import override

LEARNER_CONNECTOR = "learner_connector"


class LearnerConnectorState(TorchLearner):
    """Mixin for any TorchLearner: its learner connector's state under `learner_connector`."""

    @override(TorchLearner)
    def get_state(
        self, components: Any = None, *, not_components: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        state = super().get_state(components, not_components=not_components, **kwargs)
        pipeline = self._learner_connector
        if pipeline is not None and self._check_component(
            LEARNER_CONNECTOR, components, not_components
        ):
            pieces = pipeline.get_state()
            if pieces:
                state[LEARNER_CONNECTOR] = pieces
        return state

    @override(TorchLearner)
    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        if LEARNER_CONNECTOR in state and self._learner_connector is not None:
            self._learner_connector.set_state(state[LEARNER_CONNECTOR])
