"""`ArrayBCPPOLearner`: BC + PPO (a spec with `bc:`) on the array runner's rollouts.

The array learner's update (learners/array_ppo.py) with the BC term of `BCPPOLearner`
(learners/bc_ppo.py), from the same columns: the runner labels the cloned module's rows with
the teacher's action and the row's mode (env_runner/bc_rows.py), the advantages are
standardized over the student's steps (learners/flat_batch.py), and each minibatch step adds
coef x the cross-entropy to the teacher on the labelled steps, with teacher-led steps left out
of the PPO terms (learners/update_step.py). The weight is a device tensor moved between
updates as the driver pushes new settings (`set_bc_settings`), so a captured step replays it.

From `BCPPOLearner` it takes the settings, their updates and RLlib's path for anything that
is not a rollout batch. A label replay (`bc.replay`) is not served here: such a spec learns
through RLlib's path (rl_platform/spec/learner_choice.py).
"""

from ray.rllib.utils.annotations import override

from rl_platform.learners.array_ppo import ArrayPPOLearner
from rl_platform.learners.bc_ppo import BCPPOLearner


class ArrayBCPPOLearner(ArrayPPOLearner, BCPPOLearner):
    """See the module docstring."""

    @override(ArrayPPOLearner)
    def bc_coef(self, module_id: str) -> float | None:
        return float(self.bc_settings.coef)
