"""Behaviour cloning wired into RLlib: BC + PPO with env slices led by a teacher, curriculum
phases, offline BC, and `rlp record` (docs/bc.md).

The RLlib side of BC: the config extension, the env-runner connectors (`teacher_labels.py`,
`teacher_actions.py`), the callbacks, teachers and `rlp record`. Its pure rules (slices,
schedule, label replay) are `rl_platform.imitation`; its section of the spec is
`rl_platform.spec.bc`; its learner is `rl_platform.learners.bc_ppo`.
"""
