"""Acting reads the learner's modules when both are local on one device (#48): the runner
holds the learner's trained module itself, no weights are copied after an update, and two
iterations train exactly the weights the copying path trains."""

import torch

from rl_platform.env_runner.shared_modules import ShareLearnerModules
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.spec import validate_spec_data


def _spec(learner: str = "auto", **resources):
    return validate_spec_data(
        {
            "name": "shared_modules",
            "seed": 3,
            "env": {"id": "rlp/Duel-v0", "envs_per_runner": 8},
            "model": {"type": "mlp", "hidden": [16]},
            "training": {
                "train_batch_size": 256,
                "minibatch_size": 128,
                "num_epochs": 2,
                "learner": learner,
            },
            "resources": resources,
        }
    )


def _callbacks(config) -> list:
    callbacks = config.callbacks_class
    return list(callbacks) if isinstance(callbacks, list | tuple) else [callbacks]


def _without_sharing(config):
    return config.callbacks([c for c in _callbacks(config) if c is not ShareLearnerModules])


def _trained_weights(config, iterations: int = 2) -> tuple[list[torch.Tensor], int]:
    algo = config.build_algo()
    copies = 0
    runner = algo.env_runner
    original = runner.set_state

    def counting(state):
        nonlocal copies
        copies += int("rl_module" in state)
        return original(state)

    runner.set_state = counting
    try:
        for _ in range(iterations):
            algo.train()
        learner = algo.learner_group._learner
        shared = runner.module["main"] is learner.module["main"]
        weights = [p.detach().clone() for p in learner.module["main"].parameters()]
    finally:
        algo.stop()
    return weights, copies if not shared else -1 - copies


def test_acting_shares_the_learners_module_and_trains_the_same_weights(ray_local) -> None:
    config = build_algorithm_config(_spec())
    shared, no_copies = _trained_weights(config)
    copied, copies = _trained_weights(_without_sharing(build_algorithm_config(_spec())))
    assert no_copies == -1, "the runner holds the learner's module and got no weight copy"
    assert copies == 2, "the copying path loads the weights once per iteration"
    for mine, theirs in zip(shared, copied, strict=True):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)


def test_overlap_and_rllibs_learner_keep_their_own_copy() -> None:
    """With `resources.overlap` acting runs during the update on the weights before it; RLlib's
    learner path is left as RLlib made it."""
    assert ShareLearnerModules in _callbacks(build_algorithm_config(_spec()))
    assert ShareLearnerModules not in _callbacks(build_algorithm_config(_spec(overlap=True)))
    assert ShareLearnerModules not in _callbacks(build_algorithm_config(_spec("rllib")))
