"""One tiny local `rlp train` on the console, as a new user runs it (its own process, its own
Ray with the dashboard), shared by the tests that only read what it printed and left:
`tests/integration/test_console_output.py` (progress and the dashboard URL, not Ray's notices;
no Ray process outlives it) and `tests/reliability/test_console_is_ours.py` (lines in the
run's own words, the source only in `train.log`). One background scenario (tests/background.py)
instead of two `rlp train` children, each a Ray start and two iterations.
"""

import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

from tests.background import Scenario
from tests.conftest import EXPERIMENTS, REPO_ROOT
from tests.reliability.support import RLP, TINY, child_env, sets

MARKER = "RLP_TEST_CONSOLE_RUN"
"""An environment variable every process of the run inherits, Ray's included."""


@dataclass(frozen=True)
class ConsoleRun:
    result: subprocess.CompletedProcess[str]
    out: Path
    marker: str

    @property
    def run_dir(self) -> Path:
        [run_dir] = [p for p in self.out.glob("cartpole_ppo/*") if p.is_dir()] or [self.out]
        return run_dir


def _train_on_the_console(folder: Path, env: dict[str, str]) -> ConsoleRun:
    """`rlp train experiments/cartpole_ppo.yaml --profile smoke --dashboard` (2 iterations), at
    the tiny reliability budget; not a terminal, so one plain line per iteration."""
    spec = EXPERIMENTS / "cartpole_ppo.yaml"
    out = folder / "runs"
    marker = uuid.uuid4().hex
    args = [str(RLP), "train", str(spec), "--profile", "smoke", *sets(TINY), "--out", str(out)]
    result = subprocess.run(
        [*args, "--dashboard"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        env=child_env(env, **{MARKER: marker}),
        timeout=540,
    )
    return ConsoleRun(result=result, out=out, marker=marker)


CONSOLE_RUN = Scenario.run_once("console_run", _train_on_the_console)
