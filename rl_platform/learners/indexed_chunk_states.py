"""Start each training sequence from its state read by index (connectors/chunk_states.py).

RLlib builds the learner connector pipeline inside `Learner.build()`; this mixin puts
`ChunkStatesToBatch` right before RLlib's `AddStatesFromEpisodesToBatch`, after the time axis
is added (`AddTimeDimToBatchAndZeroPad` returns early once STATE_IN is in the batch, so the
piece cannot run earlier). RLlib's piece then finds STATE_IN present and leaves it.
"""

from ray.rllib.connectors.common import AddStatesFromEpisodesToBatch
from ray.rllib.core.learner.torch.torch_learner import TorchLearner
from ray.rllib.utils.annotations import override

from rl_platform.connectors.chunk_states import ChunkStatesToBatch


class IndexedChunkStates(TorchLearner):
    """Mixin for any TorchLearner (see the module docstring)."""

    @override(TorchLearner)
    def build(self) -> None:
        super().build()
        pipeline = self._learner_connector
        if pipeline is not None and any(
            isinstance(piece, AddStatesFromEpisodesToBatch) for piece in pipeline.connectors
        ):
            pipeline.insert_before(AddStatesFromEpisodesToBatch, ChunkStatesToBatch())
