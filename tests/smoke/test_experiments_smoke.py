"""Every experiment file validates, declares a `smoke` profile, and trains in that profile."""

from pathlib import Path

import pytest

from rl_platform import load_spec, train
from rl_platform.storage.checkpoints import load_checkpoint
from tests.conftest import EXPERIMENTS

SPEC_FILES = sorted(p for p in EXPERIMENTS.rglob("*.yaml"))


def _id(path: Path) -> str:
    return str(path.relative_to(EXPERIMENTS))


@pytest.mark.parametrize("path", SPEC_FILES, ids=_id)
def test_spec_validates_full_and_smoke(path):
    full = load_spec(path)
    smoke = load_spec(path, profile="smoke")
    assert "smoke" in full.profiles
    assert smoke.training == full.training and smoke.model == full.model and smoke.env == full.env


@pytest.mark.parametrize("path", SPEC_FILES, ids=_id)
def test_smoke_profile_trains_and_checkpoints(ray_local, tmp_path, path):
    spec = load_spec(
        path, profile="smoke", overrides=["logging.wandb=off", "logging.tensorboard=false"]
    )
    result = train(spec, out_dir=tmp_path)
    assert result.iterations >= 1 and result.env_steps > 0
    checkpoint = load_checkpoint(result.last_checkpoint)
    assert checkpoint.meta["iteration"] == result.iterations
