"""Fixtures of the reliability suite: test envs, and one shared tiny in-process training run."""

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.reliability.faulty_envs import KwargsCartPole, register_gym_envs
from tests.reliability.support import RAY_PATIENCE, SMOKE_SPEC, TINY, FakeWandb

register_gym_envs()
for _name, _value in RAY_PATIENCE.items():  # before the session Ray starts
    os.environ.setdefault(_name, _value)


@dataclass(frozen=True)
class SmokeRun:
    spec_path: Path
    out_dir: Path
    run_dir: Path
    iterations: int
    wandb: FakeWandb
    env_kwargs_seen: list[dict]


@pytest.fixture(scope="session")
def smoke_run(ray_local, tmp_path_factory) -> Iterator[SmokeRun]:
    """Two tiny PPO iterations in-process, checkpointing each, with secrets in env.kwargs.

    TensorBoard is on (its files must stay in the run folder too); W&B is a recording fake so
    the test sees exactly the config W&B would upload, without a W&B process.
    """
    from rl_platform.run.train import train
    from rl_platform.spec import load_spec

    root = tmp_path_factory.mktemp("smoke")
    spec_path = root / "spec.yaml"
    spec_path.write_text(SMOKE_SPEC)
    overrides = [o for o in TINY if not o.startswith("logging.")]
    spec = load_spec(spec_path, overrides=overrides)
    fake = FakeWandb()
    KwargsCartPole.seen.clear()
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "wandb", fake.module())
        result = train(spec, out_dir=root / "runs")
    yield SmokeRun(
        spec_path=spec_path,
        out_dir=root / "runs",
        run_dir=result.run_dir,
        iterations=result.iterations,
        wandb=fake,
        env_kwargs_seen=list(KwargsCartPole.seen),
    )
