"""BC on the array learner learns (#48): a student kickstarted by the duel's `based` (half
its games teacher-led, half student-led and labelled) comes to agree with its teacher on the
states it visits, in env steps, as RLlib's path does (about 0.7 within 20k env steps)."""

import functools

from rl_platform.bc.extension import bc_extension
from rl_platform.learners.array_bc_ppo import ArrayBCPPOLearner
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.league_callback import league_extension
from rl_platform.spec import ExperimentSpec

TARGET_ACCURACY = 0.6
MAX_ENV_STEPS = 40_000


def test_a_kickstarted_student_agrees_with_its_teacher(ray_local, tmp_path) -> None:
    spec = ExperimentSpec.model_validate(
        {
            "name": "array_bc_learning",
            "seed": 7,
            "env": {"id": "rlp/Duel-v0", "envs_per_runner": 32, "kwargs": {"zone_closes_at": 0.5}},
            "model": {"hidden": [64, 64], "activation": "tanh"},
            "training": {
                "lr": 1.0e-3,
                "train_batch_size": 4000,
                "minibatch_size": 1000,
                "num_epochs": 4,
                "learner": "array",
            },
            "league": {"opponent_mix": {"based": 1.0}, "scripted": ["based"], "slots": 1},
            "bc": {"teacher": "scripted://duel/based", "teacher_led": 0.5, "student_led": 0.5},
        }
    )
    extension = functools.partial(league_extension, run_dir=tmp_path)
    algo = build_algorithm_config(spec, extensions=[extension, bc_extension]).build_algo()
    try:
        assert isinstance(algo.learner_group._learner, ArrayBCPPOLearner)
        accuracy, env_steps = 0.0, 0
        while env_steps < MAX_ENV_STEPS and accuracy < TARGET_ACCURACY:
            result = algo.train()
            accuracy = float(result["learners"]["main"]["bc/accuracy"])
            env_steps = int(result["num_env_steps_sampled_lifetime"])
    finally:
        algo.stop()
    assert accuracy >= TARGET_ACCURACY, f"bc/accuracy {accuracy:.2f} after {env_steps} env steps"
