"""What a new user sees from a local `rlp train` (its own process, as they would run it): our
progress lines and the dashboard URL; Ray's routine notices go to the run's train.log.

The `rlp train` child (a Ray start with its dashboard, imports, two iterations: one core for
most of a minute) runs beside the rest of the suite (tests/background.py)."""

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.background import Background, Scenario
from tests.conftest import EXPERIMENTS, REPO_ROOT

RAY_NOTICES = (
    "Token authentication is enabled",
    "is now ignored by default when packaging",
    "Ignoring upload to cluster",
    "Started a local Ray instance",
    "You are running PPO on the new API stack",
    "RLModule(config=[RLModuleConfig object])",
    "Install gputil",
    "Trainable.setup took",
)


@dataclass(frozen=True)
class ConsoleRun:
    result: subprocess.CompletedProcess[str]
    out: Path


def _train_on_the_console(folder: Path, env: dict[str, str]) -> ConsoleRun:
    rlp = Path(sys.executable).with_name("rlp")
    spec = EXPERIMENTS / "cartpole_ppo.yaml"
    args = [str(rlp), "train", str(spec), "--profile", "smoke", "--out", str(folder)]
    result = subprocess.run(
        [*args, "--dashboard"], capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=540
    )
    return ConsoleRun(result=result, out=folder)


LOCAL_TRAIN = Scenario.run_once("console_output", _train_on_the_console)
BACKGROUND = [LOCAL_TRAIN]


def test_local_train_shows_progress_and_dashboard_not_ray_notices(background: Background) -> None:
    run = background.result(LOCAL_TRAIN)
    result = run.result
    assert result.returncode == 0, result.stderr[-3000:]
    console = result.stdout + result.stderr
    assert "cartpole_ppo | iter 2 |" in console and "run folder:" in console
    assert re.search(r"Ray dashboard: http://127\.0\.0\.1:\d+", console)
    assert [notice for notice in RAY_NOTICES if notice in console] == []
    [log] = run.out.glob("cartpole_ppo/*/train.log")
    assert "You are running PPO on the new API stack" in log.read_text()  # kept, off screen
