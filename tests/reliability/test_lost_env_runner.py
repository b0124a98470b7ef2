"""Round 4, item 2: a lost Ray process is survived, or named. A remote env runner SIGKILLed
mid-run (as the kernel's out-of-memory killer does) is restarted by RLlib; the iteration that
sampled nothing is not learned from and does not count, so the run ends at the iteration and
env steps of an unkilled run, never with "a loss became NaN/Inf ... try a lower training.lr".
A runner killed again each time it comes back is lost for good: exit 3, one line naming it,
the last checkpoint kept. Both are real `rlp train` runs with one remote env runner, started in
the background (tests/background.py); the OOM counter is read from a fake cgroup file.
"""

import contextlib
import importlib
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.utils.oom_kills import oom_kill_count
from tests.background import Background, Scenario
from tests.reliability.support import (
    CARTPOLE,
    TINY,
    TrainProcess,
    read_metrics,
    reaped,
    sets,
)

ITERATIONS = 4
REMOTE_RUNNER = [
    *TINY,
    "resources.env_runners=1",
    "resources.cpus_per_env_runner=0.5",
    f"stop.iterations={ITERATIONS}",
    "stop.env_steps=null",
    "checkpoint.every_iterations=1",
]


@dataclass(frozen=True)
class KilledRun:
    run_dir: Path
    returncode: int
    output: str
    kills: int


def _env_runners(pid: int) -> list:
    psutil = importlib.import_module("psutil")  # bundled with Ray (support.py imports it)
    with contextlib.suppress(psutil.NoSuchProcess):
        children = psutil.Process(pid).children(recursive=True)
        return [c for c in children if "EnvRunner" in " ".join(_cmdline(c))]
    return []


def _cmdline(process) -> list[str]:
    try:
        return process.cmdline()
    except Exception:  # gone meanwhile
        return []


def _kill_runners(process: TrainProcess, sig: int = signal.SIGKILL) -> int:
    runners = _env_runners(process.proc.pid)
    for runner in runners:
        with contextlib.suppress(Exception):
            runner.send_signal(sig)
    return len(runners)


def _kill_once(tmp: Path, env: dict[str, str]) -> KilledRun:
    args = [str(CARTPOLE), *sets(REMOTE_RUNNER)]
    with reaped(TrainProcess.start(args, out_dir=tmp / "runs", log_dir=tmp, env=env)) as process:
        run_dir = process.wait_for_iterations(2)
        kills = _kill_runners(process)
        returncode = process.wait(timeout_s=300)
        return KilledRun(run_dir, returncode, process.output, kills)


def _kill_every_return(tmp: Path, env: dict[str, str]) -> KilledRun:
    """Kill the runner after iteration 1, and again each time Ray restarts it (RLlib's limit
    is 3 restarts), until the run gives up."""
    args = [str(CARTPOLE), *sets([*REMOTE_RUNNER, "stop.iterations=1000"])]
    with reaped(TrainProcess.start(args, out_dir=tmp / "runs", log_dir=tmp, env=env)) as process:
        run_dir = process.wait_for_iterations(1)
        kills = 0
        deadline = time.monotonic() + 240
        while process.proc.poll() is None and time.monotonic() < deadline:
            kills += _kill_runners(process)
            time.sleep(0.2)
        returncode = process.wait(timeout_s=30)
        return KilledRun(run_dir, returncode, process.output, kills)


def _freeze_once(tmp: Path, env: dict[str, str]) -> KilledRun:
    """SIGSTOP the runner after iteration 2: it neither samples nor dies. With RLlib's wait for
    samples lowered to 3 s, the loop pings it, kills it after 10 s of silence, and Ray
    restarts it (by hand with the default 60 s this took 95 s)."""
    args = [str(CARTPOLE), *sets([*REMOTE_RUNNER, f"resources.sample_timeout_s={FROZEN_WAIT_S}"])]
    with reaped(TrainProcess.start(args, out_dir=tmp / "runs", log_dir=tmp, env=env)) as process:
        run_dir = process.wait_for_iterations(2)
        frozen = _kill_runners(process, signal.SIGSTOP)
        returncode = process.wait(timeout_s=300)
        return KilledRun(run_dir, returncode, process.output, frozen)


FROZEN_WAIT_S = 3
KILLED_ONCE = Scenario.run_once("env_runner_killed_once", _kill_once)
FROZEN_ONCE = Scenario.run_once("env_runner_frozen_once", _freeze_once)
KILLED_FOR_GOOD = Scenario.run_once("env_runner_killed_for_good", _kill_every_return)
BACKGROUND = [KILLED_ONCE, KILLED_FOR_GOOD, FROZEN_ONCE]


def _ends_as_an_untouched_run(run: KilledRun) -> None:
    """One runner hit, exit 0, and the rows of a run nobody touched: 200 env steps in each of
    its 4 iterations, `latest` the 4th; no loss blamed on the learning rate."""
    assert run.kills == 1, run.output[-3000:]
    assert run.returncode == 0, run.output[-3000:]
    rows = read_metrics(run.run_dir)
    assert [int(r["iteration"]) for r in rows] == list(range(1, ITERATIONS + 1))
    assert [int(r["env_steps"]) for r in rows] == [200 * i for i in range(1, ITERATIONS + 1)]
    assert CheckpointStore(run.run_dir / "checkpoints").latest().name == "iter_000004"
    assert "NaN" not in run.output and "training.lr" not in run.output


def test_a_sigkilled_env_runner_is_restarted_and_the_run_ends_where_an_unkilled_one_does(
    background: Background,
):
    killed = background.result(KILLED_ONCE)
    _ends_as_an_untouched_run(killed)
    # When RLlib already counts the runner out of service as the next iteration starts, it
    # samples that iteration with the driver's own env runner instead (timing: a loaded
    # machine); otherwise the iteration samples nothing, and the loss is named, not a NaN.
    lost_iteration = "sampled nothing" in killed.output
    fell_back = "taking actor 1 out of service" in (killed.run_dir / "train.log").read_text()
    assert lost_iteration or fell_back, killed.output[-3000:]
    if lost_iteration:
        assert "sampled nothing: env runner 1" in killed.output
    assert "A worker died" not in killed.output, killed.output[-3000:]  # in the run's log


def test_a_frozen_env_runner_is_restarted_and_the_run_ends_where_an_unfrozen_one_does(
    background: Background,
):
    frozen = background.result(FROZEN_ONCE)
    _ends_as_an_untouched_run(frozen)
    assert "sampled nothing: env runner 1 (frozen for 10 s, restarted)" in frozen.output


def test_an_env_runner_that_never_comes_back_is_named_and_the_checkpoint_kept(
    background: Background,
):
    lost = background.result(KILLED_FOR_GOOD)
    assert lost.returncode == 3, lost.output[-3000:]
    [last] = [line for line in lost.output.splitlines() if line.startswith("training stopped:")]
    assert "env runner 1" in last, last
    assert "restarted the maximum 3 time(s)" in last and "Last good checkpoint" in last
    assert "training.lr" not in lost.output and "Traceback" not in lost.output
    assert "A worker died" not in lost.output, lost.output[-3000:]  # in the run's log
    latest = CheckpointStore(lost.run_dir / "checkpoints").latest()
    assert latest is not None and latest.name in last
    load_checkpoint(latest)  # intact


def test_the_kernels_oom_kills_are_read_from_the_cgroup(tmp_path):
    v2 = tmp_path / "memory.events"
    v2.write_text("low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n")
    v1 = tmp_path / "memory.oom_control"
    v1.write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n")
    assert oom_kill_count((tmp_path / "absent", v2)) == 2
    assert oom_kill_count((v1,)) == 7
    assert oom_kill_count((tmp_path / "absent",)) is None
