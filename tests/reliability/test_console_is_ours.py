"""Round 4, item 5: our line, not the library's traceback. A user's env that fails mid-run
(raises, returns the old gym API, a wrong shape, NaN: each a `UserEnvError` in the env runner)
made RLlib log "Environment step failed ..." with its full traceback on the console before our
one line; Ray's records now go to the run's `train.log` only, and the console's only error is
ours. With a remote env runner, what the runner prints (the env's traceback, its prints) and
Ray's "(raylet) A worker died ..." went to the console too: now to `train.log`, and the
training loop's warning names the env's own error. Real `rlp train` runs (the console is what is
judged), tiny budgets, run in the background (tests/background.py).
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.background import Background, Scenario
from tests.reliability.support import REPO, RLP, TINY, child_env, sets

BROKEN_ENV = "tests.fixtures.broken_user_envs:StepRaises"
CHATTY_ENV = "tests.fixtures.broken_user_envs:ChattyStepRaises"


@dataclass(frozen=True)
class Broken:
    returncode: int
    console: str
    out: Path


def _train_an_env_that_breaks(
    tmp: Path, env: dict[str, str], *, env_id: str = BROKEN_ENV, more: tuple[str, ...] = ()
) -> Broken:
    spec = tmp / "spec.yaml"
    spec.write_text(
        f"name: breaks_later\nenv: {{id: '{env_id}', kwargs: {{after: 250}}}}\n"
        "model: {hidden: [8]}\nstop: {iterations: 3}\ncheckpoint: {every_iterations: 1}\n"
    )
    out = tmp / "runs"
    result = subprocess.run(
        [str(RLP), "train", str(spec), *sets([*TINY, *more]), "--out", str(out)],
        capture_output=True,
        text=True,
        env=child_env(env),
        cwd=REPO,
        timeout=240,
    )
    return Broken(result.returncode, result.stdout + result.stderr, out)


def _train_on_a_remote_runner_whose_env_breaks(tmp: Path, env: dict[str, str]) -> Broken:
    remote = ("resources.env_runners=1", "resources.cpus_per_env_runner=0.5")
    return _train_an_env_that_breaks(tmp, env, env_id=CHATTY_ENV, more=remote)


BROKEN = Scenario.run_once("env_breaks_mid_run", _train_an_env_that_breaks)
BROKEN_REMOTE = Scenario.run_once(
    "env_breaks_on_a_remote_runner", _train_on_a_remote_runner_whose_env_breaks
)
BACKGROUND = [BROKEN, BROKEN_REMOTE]


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


def test_what_a_remote_env_runner_prints_goes_to_the_run_log(background: Background):
    broken = background.result(BROKEN_REMOTE)
    console = broken.console
    # RLlib restarts the runner each time its env raises (after 250 steps of the env's life),
    # so the 3 iterations finish; each loss is one warning that names the env's own error.
    assert broken.returncode == 0, console[-3000:]
    warnings = [line for line in console.splitlines() if "sampled nothing" in line]
    assert warnings and all("its env failed: env " + CHATTY_ENV in w for w in warnings), warnings
    assert all("raised ValueError: the simulator lost its connection" in w for w in warnings)
    # Only the driver's own preflight prints to this console (4 random steps before Ray).
    assert console.count("chatty env:") == 1, console[-3000:]
    for library_line in ("Traceback", "SingleAgentEnvRunner pid=", "(raylet)", "A worker died"):
        assert library_line not in console, library_line
    [run_dir] = [p for p in broken.out.glob("*/*") if p.is_dir()]
    logged = (run_dir / "train.log").read_text()
    assert "(SingleAgentEnvRunner pid=" in logged and "chatty env: reset after" in logged
    assert "Traceback" in logged and "(raylet) A worker died" in logged
