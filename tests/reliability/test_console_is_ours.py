"""Round 4, item 5: our line, not the library's traceback. A user's env that fails mid-run
(raises, returns the old gym API, a wrong shape, NaN: each a `UserEnvError` in the env runner)
made RLlib log "Environment step failed ..." with its full traceback on the console before our
one line; Ray's records now go to the run's `train.log` only, and the console's only error is
ours. With a remote env runner, what the runner prints (the env's traceback, its prints) and
Ray's "(raylet) A worker died ..." went to the console too: now to `train.log`, and the
training loop's warning names the env's own error. Real `rlp train` runs (the console is what is
judged), tiny budgets, run in the background (tests/background.py).

Issue #59 A: the console reads like a tool. Console lines were loguru's default format
(`2026-12-07 15:05:42.345 | INFO     | rl_platform.run.progress:update:77 - ...`) on a
terminal and in job logs alike; now a short time and the message, the level only where it is
not INFO (`warning: ...`), the source only in `train.log` (and under `--verbose`). Progress
goes to stderr, so `--json` stays clean on stdout, and a long `rlp eval` off a terminal says
how far it got within seconds of its games starting (it once said nothing for minutes).
"""

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.background import Background, Scenario
from tests.console_run import CONSOLE_RUN
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
SOURCE = re.compile(r"rl_platform\.[\w.]+:\w+:\d+")
"""loguru's `module:function:line`, as its default format and train.log show it."""
OUR_LINE = re.compile(r"^\d\d:\d\d:\d\d (warning: |error: )?\S")


BACKGROUND = [BROKEN, BROKEN_REMOTE, CONSOLE_RUN]  # the run is shared (tests/console_run.py)


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


def test_console_lines_are_the_runs_own_words_and_train_log_keeps_the_source(
    background: Background,
):
    run = background.result(CONSOLE_RUN)
    assert run.result.returncode == 0, run.result.stderr[-3000:]
    assert run.result.stdout == ""  # progress and notes go to stderr
    lines = run.result.stderr.splitlines()
    progress = [line for line in lines if "cartpole_ppo | iter" in line]
    assert len(progress) == 2 and all(OUR_LINE.match(line) for line in progress), progress
    assert re.match(r"^\d\d:\d\d:\d\d cartpole_ppo \| iter 2 \| env steps [\d,]+ \|", progress[1])
    assert [line for line in lines if SOURCE.search(line) or "| INFO" in line] == []
    assert any(OUR_LINE.match(line) and "stopped: iterations >= 2" in line for line in lines)
    assert lines[-1].startswith("run folder: ")
    logged = (run.run_dir / "train.log").read_text()
    assert "| INFO     | rl_platform.run.progress:update:" in logged  # the source, in the file
    assert re.search(r"rl_platform\.run\.progress:update:\d+ - cartpole_ppo \| iter 2 \|", logged)


def test_warnings_say_warning_and_not_their_source_on_the_console(background: Background):
    broken = background.result(BROKEN_REMOTE)
    warnings = [line for line in broken.console.splitlines() if "sampled nothing" in line]
    assert warnings and all(re.match(r"^\d\d:\d\d:\d\d warning: ", w) for w in warnings)
    assert not SOURCE.search(broken.console)
    [run_dir] = [p for p in broken.out.glob("*/*") if p.is_dir()]
    assert re.search(
        r"\| WARNING  \| rl_platform\.[\w.]+:\w+:\d+ - .*sampled nothing",
        (run_dir / "train.log").read_text(),
    )


FIRST_PROGRESS_S = 5.0


def _eval(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(RLP), "eval", "random", "--env", "duel", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=REPO,
    )


def test_a_long_eval_says_games_rate_and_eta_within_seconds_of_starting():
    """`rlp eval random --env duel -n 1000000000 --json` off a terminal once printed nothing
    for minutes. Now its first line says the games started, and a progress line with games
    over, games/s and an ETA follows within `FIRST_PROGRESS_S` (counted while the arena
    plays its first batch of 4096, whose games end between frames 80 and 900)."""
    child = _eval("-n", "1000000000")
    watchdog = threading.Timer(240, child.kill)  # a child that hangs ends the readlines
    watchdog.start()
    try:
        started = child.stderr.readline()
        seen_start = time.monotonic()
        assert re.match(r"^\d\d:\d\d:\d\d eval random: 1,000,000,000 games$", started), started
        progress = child.stderr.readline()
        waited = time.monotonic() - seen_start
    finally:
        watchdog.cancel()
        child.kill()
        stdout, _ = child.communicate(timeout=30)
    line = re.compile(
        r"^\d\d:\d\d:\d\d eval random: [\d,]+/1,000,000,000 games \| [\d,.]+ games/s \| ETA \S+$"
    )
    assert line.match(progress.strip()), progress
    assert waited < FIRST_PROGRESS_S, f"first progress line after {waited:.1f} s"
    assert stdout == ""  # nothing but the result ever goes to stdout


def test_eval_json_stays_clean_on_stdout_with_progress_on_stderr():
    # 1,024 games, one arena batch: the same lines as 4,096 at a quarter of the frames' work
    child = _eval("-n", "1024")
    stdout, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr[-3000:]
    assert json.loads(stdout)["episodes"] == 1024
    first, last = stderr.splitlines()[0], stderr.splitlines()[-1]
    assert re.match(r"^\d\d:\d\d:\d\d eval random: 1,024 games$", first), first
    assert re.match(
        r"^\d\d:\d\d:\d\d eval random: 1,024 games in [\d.]+ s \| [\d,.]+ games/s$", last
    )
