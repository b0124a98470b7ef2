"""Which RLlib classes serve each `algo:` of a spec: its `AlgorithmConfig` and its Learner.

Stock RLlib configs (never subclassed); our learners add the finite-update guard and, for
`bc:` on PPO, the BC term (see `rl_platform.learners`). Imports are inside the functions so a
spec for one algorithm never loads the others.
"""

from ray.rllib.algorithms.algorithm_config import AlgorithmConfig

from rl_platform.spec import ExperimentSpec


def algorithm_config_class(algo: str) -> type[AlgorithmConfig]:
    from ray.rllib.algorithms.appo import APPOConfig
    from ray.rllib.algorithms.bc import BCConfig
    from ray.rllib.algorithms.dqn import DQNConfig
    from ray.rllib.algorithms.impala import IMPALAConfig
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.algorithms.sac import SACConfig

    classes = {"PPO": PPOConfig, "APPO": APPOConfig, "IMPALA": IMPALAConfig, "BC": BCConfig}
    return (classes | {"DQN": DQNConfig, "SAC": SACConfig})[algo]


def learner_class(spec: ExperimentSpec) -> type:
    """PPO on the array runner's rollouts learns with `ArrayPPOLearner` (`training.learner`),
    with `ArrayBCPPOLearner` where the spec has `bc:`; other PPO with a `bc:` block with
    `BCPPOLearner`; SAC/DQN on the off-policy array path learn with `ArraySACLearner` /
    `ArrayDQNLearner` (rl_platform/learners/off_policy.py); every class guards its updates."""
    from rl_platform.learners import guarded
    from rl_platform.learners.array_bc_ppo import ArrayBCPPOLearner
    from rl_platform.learners.array_ppo import ArrayPPOLearner
    from rl_platform.learners.bc_ppo import BCPPOLearner
    from rl_platform.learners.off_policy import ArrayDQNLearner, ArraySACLearner
    from rl_platform.learners.offline_bc import GuardedBCLearner
    from rl_platform.learners.ppo import PlatformPPOLearner

    if spec.algo in ("SAC", "DQN") and spec.learner_choice().kind == "array":
        return ArraySACLearner if spec.algo == "SAC" else ArrayDQNLearner
    array = spec.algo == "PPO" and spec.learner_choice().kind == "array"
    if spec.bc is not None and spec.algo == "PPO":
        return ArrayBCPPOLearner if array else BCPPOLearner
    if array:
        return ArrayPPOLearner
    classes = {"PPO": PlatformPPOLearner, "APPO": guarded.GuardedAPPOLearner}
    classes |= {"IMPALA": guarded.GuardedIMPALALearner, "DQN": guarded.GuardedDQNLearner}
    return (classes | {"SAC": guarded.GuardedSACLearner, "BC": GuardedBCLearner})[spec.algo]
