"""Round 4, item 5: our line, not the library's traceback. A user's env that fails mid-run
(raises, returns the old gym API, a wrong shape, NaN: each a `UserEnvError` in the env runner)
made RLlib log "Environment step failed ..." with its full traceback on the console before our
one line; Ray's records now go to the run's `train.log` only, and the console's only error is
ours. A real `rlp train` (the console is what is judged), local env runner, tiny budget, run in
the background (tests/background.py).
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.background import Background, Scenario
from tests.reliability.support import REPO, RLP, TINY, child_env, sets

BROKEN_ENV = "tests.fixtures.broken_user_envs:StepRaises"


@dataclass(frozen=True)
class Broken:
    returncode: int
    console: str
    out: Path


def _train_an_env_that_breaks(tmp: Path, env: dict[str, str]) -> Broken:
    spec = tmp / "spec.yaml"
    spec.write_text(
        f"name: breaks_later\nenv: {{id: '{BROKEN_ENV}', kwargs: {{after: 250}}}}\n"
        "model: {hidden: [8]}\nstop: {iterations: 3}\ncheckpoint: {every_iterations: 1}\n"
    )
    out = tmp / "runs"
    result = subprocess.run(
        [str(RLP), "train", str(spec), *sets(TINY), "--out", str(out)],
        capture_output=True,
        text=True,
        env=child_env(env),
        cwd=REPO,
        timeout=240,
    )
    return Broken(result.returncode, result.stdout + result.stderr, out)


BROKEN = Scenario.run_once("env_breaks_mid_run", _train_an_env_that_breaks)
BACKGROUND = [BROKEN]


def test_an_env_failing_mid_run_shows_only_our_line(background: Background):
    broken = background.result(BROKEN)
    console = broken.console
    assert broken.returncode == 2, console[-3000:]
    errors = [line for line in console.splitlines() if "error" in line.lower()]
    assert len(errors) == 1 and errors[0].startswith(f"error: env {BROKEN_ENV}"), errors
    assert "broken_user_envs.py" in errors[0]  # the user's own frame, as docs/envs.md promises
    assert "Traceback" not in console and "env_runner.py" not in console
    [run_dir] = [p for p in broken.out.glob("*/*") if p.is_dir()]
    logged = (run_dir / "train.log").read_text()
    assert "Environment step failed" in logged and "Traceback" in logged  # kept, in the file
