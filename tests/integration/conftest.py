"""Fixtures shared by the integration tests: one small trained CartPole run for the whole session.

The eval, watch and plot tests all read the same run folder (they never write into it), so it is
trained once instead of once per test file.
"""

from pathlib import Path

import pytest

from rl_platform import load_spec, train
from tests.conftest import EXPERIMENTS

TINY = ["logging.wandb=off", "training.train_batch_size=500", "training.minibatch_size=250"]


@pytest.fixture(scope="session")
def cartpole_run(ray_local, tmp_path_factory) -> Path:
    """Three iterations: enough points for a learning curve, a checkpoint to load policies from."""
    spec = load_spec(
        EXPERIMENTS / "cartpole_ppo.yaml", profile="smoke", overrides=[*TINY, "stop.iterations=3"]
    )
    return train(spec, out_dir=tmp_path_factory.mktemp("runs")).run_dir
