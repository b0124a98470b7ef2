"""The stock learners of the other algorithms, each with the finite-update guard (and, for the
on-policy ones that train recurrent modules, chunk states read by index)."""

from ray.rllib.algorithms.appo.torch.appo_torch_learner import APPOTorchLearner
from ray.rllib.algorithms.dqn.torch.dqn_torch_learner import DQNTorchLearner
from ray.rllib.algorithms.impala.torch.impala_torch_learner import IMPALATorchLearner
from ray.rllib.algorithms.sac.torch.sac_torch_learner import SACTorchLearner

from rl_platform.learners.finite_guard import FiniteUpdateGuard
from rl_platform.learners.indexed_chunk_states import IndexedChunkStates


class GuardedAPPOLearner(FiniteUpdateGuard, IndexedChunkStates, APPOTorchLearner):
    """APPO with the finite-update guard."""


class GuardedIMPALALearner(FiniteUpdateGuard, IndexedChunkStates, IMPALATorchLearner):
    """IMPALA with the finite-update guard."""


class GuardedDQNLearner(FiniteUpdateGuard, DQNTorchLearner):
    """DQN with the finite-update guard."""


class GuardedSACLearner(FiniteUpdateGuard, SACTorchLearner):
    """SAC with the finite-update guard."""
