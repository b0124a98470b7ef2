"""Learning on the array runner, asserted in env steps: connect four against `random`.

A small masked MLP playing only the random legal mover (both seats, league routing) must win
at least 90% of 200 greedy games within the env-step budget. The games are evaluated on the
same array runner (`sample(num_episodes=...)`, greedy), which also exercises whole-game
sampling.
"""

import functools

import numpy as np

from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.league_callback import league_extension
from rl_platform.spec import validate_spec_data

BUDGET = 60_000
SPEC = {
    "name": "c4_vs_random",
    "algo": "PPO",
    "seed": 0,
    "env": {"id": "pettingzoo/connect_four_v3", "envs_per_runner": 64, "runner": "vector"},
    "training": {
        "lr": 1.0e-3,
        "train_batch_size": 4000,
        "minibatch_size": 1000,
        "num_epochs": 4,
        "entropy_coeff": 0.01,
    },
    "model": {"type": "mlp", "hidden": [128, 128]},
    "league": {"opponent_mix": {"random": 1.0}, "scripted": ["random"], "slots": 1},
}


def _greedy_win_rate(algo, games: int) -> float:
    episodes = algo.env_runner.sample(num_episodes=games, explore=False)
    finals = [float(e.get_rewards(-1)) for e in episodes if e.is_done]
    return float(np.mean([r > 0 for r in finals[:games]]))


def test_connect_four_beats_random_within_the_budget(ray_local, tmp_path) -> None:
    spec = validate_spec_data(SPEC)
    extension = functools.partial(league_extension, run_dir=tmp_path)
    algo = build_algorithm_config(spec, extensions=[extension]).build_algo()
    history = []
    try:
        env_steps = 0
        while env_steps < BUDGET:
            result = algo.train()
            env_steps = int(result["env_runners"]["num_env_steps_sampled_lifetime"])
        history.append((env_steps, _greedy_win_rate(algo, 200)))
    finally:
        algo.stop()
    steps, win_rate = history[-1]
    assert win_rate >= 0.9, f"greedy win rate {win_rate:.2f} vs random after {steps} env steps"
