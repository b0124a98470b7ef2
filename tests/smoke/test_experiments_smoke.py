"""Every experiment file validates, declares a `smoke` profile, and trains in that profile
without a health warning of its own making (issue #50 item 6: the README's first command must
not warn)."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from loguru import logger

from rl_platform import load_spec, train
from rl_platform.run import health
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


@contextmanager
def _health_warnings() -> Iterator[list[str]]:
    """The health monitor's warnings logged inside the block (its loguru records, by module)."""
    warnings: list[str] = []
    sink = logger.add(
        warnings.append,
        level="WARNING",
        format="{message}",
        filter=lambda record: record["name"] == health.__name__,
    )
    try:
        yield warnings
    finally:
        logger.remove(sink)


@pytest.mark.parametrize("path", SPEC_FILES, ids=_id)
def test_smoke_profile_trains_and_checkpoints(ray_local, tmp_path, path):
    spec = load_spec(
        path, profile="smoke", overrides=["logging.wandb=off", "logging.tensorboard=false"]
    )
    with _health_warnings() as warnings:
        result = train(spec, out_dir=tmp_path)
    assert result.iterations >= 1 and result.env_steps > 0
    checkpoint = load_checkpoint(result.last_checkpoint)
    assert checkpoint.meta["iteration"] == result.iterations
    assert not warnings, f"{_id(path)} warns in its own smoke run: {warnings}"
