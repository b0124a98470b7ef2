"""`model.opponent_action` end to end on the array runner: the runner labels every decision
of `main` with the opponent's action at that step, the labels reach the learner batch, and
the head learns them.

Against the scripted `constant` (it always idles) every label must be IDLE, and a head that
reads the right column learns that within a few updates: its accuracy reaches 1 and its loss
falls well below the first update's. Wrong labels (another seat's, or a stale row) would
contain `main`'s own, sampled, actions and could not be learned to accuracy 1.
"""

import functools
import math

import numpy as np

from rl_platform.envs.duel.actions import Action
from rl_platform.losses.opponent_action import OPPONENT_ACTIONS
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.run.metrics import extract_metrics
from rl_platform.spec import ExperimentSpec
from tests.integration.duel_support import TINY_DUEL_TRANSFORMER
from tests.integration.episode_support import module_episodes


def _spec() -> ExperimentSpec:
    return ExperimentSpec.model_validate(
        {
            "name": "opponent_action_duel",
            "seed": 0,
            "env": {
                "id": "rlp/Duel-v0",
                "envs_per_runner": 2,
                "kwargs": {"max_steps": 200},
                "runner": "vector",
            },
            "model": {
                **TINY_DUEL_TRANSFORMER,
                "encoder": "streaming",
                "lstm_skip": True,
                "opponent_action": 1.0,
            },
            "training": {
                "lr": 3.0e-3,
                "train_batch_size": 200,
                "minibatch_size": 100,
                "num_epochs": 2,
            },
            "league": {"opponent_mix": {"constant": 1.0}, "scripted": ["constant"], "slots": 1},
        }
    )


def test_the_head_learns_the_opponents_actions_from_the_runners_labels(ray_local, tmp_path):
    from rl_platform.rllib.league_callback import league_extension

    extension = functools.partial(league_extension, run_dir=tmp_path)
    algo = build_algorithm_config(_spec(), extensions=[extension]).build_algo()
    try:
        episodes = algo.env_runner.sample(num_timesteps=200, explore=True)
        history, env_steps = [], 0
        for _ in range(6):
            metrics = extract_metrics(algo.train(), previous_env_steps=env_steps)
            env_steps = int(metrics["env_steps"])
            history.append(metrics)
    finally:
        algo.stop()

    labels = [
        sa.get_extra_model_outputs(OPPONENT_ACTIONS)
        for episode in episodes
        for module_id, sa in module_episodes(episode)
        if module_id == "main"
    ]
    assert labels and sum(len(x) for x in labels) > 0
    assert np.all(np.concatenate(labels) == Action.IDLE)
    losses = [m["loss/opponent_action"] for m in history]
    assert all(math.isfinite(x) for x in losses)
    assert losses[-1] < 0.5 * losses[0]
    assert history[-1]["train/opponent_action_accuracy"] == 1.0
