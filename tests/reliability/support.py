"""Helpers shared by the reliability tests: the real `rlp` binary, tiny budgets, polling."""

import contextlib
import importlib
import json
import os
import signal
import subprocess
import sys
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import ray  # noqa: F401 - puts Ray's bundled psutil on sys.path (not a direct dependency)

from rl_platform.storage.checkpoints import CheckpointStore
from rl_platform.storage.run_upload import RunUploader
from tests.reliability.faulty_envs import KWARGS_ENV_ID

REPO = Path(__file__).resolve().parents[2]
CARTPOLE = REPO / "experiments" / "cartpole_ppo.yaml"
RLP = Path(sys.executable).parent / "rlp"  # the console script (the package has no __main__)

# Tiny, fast iterations: one env copy, 200 steps, one epoch, no TensorBoard/W&B.
TINY = [
    "logging.wandb=off",
    "logging.tensorboard=false",
    "env.envs_per_runner=1",
    "training.train_batch_size=200",
    "training.minibatch_size=100",
    "training.num_epochs=1",
    "health.min_entropy=null",
]


# Values that must never appear in any file of a run folder, nor in what W&B receives.
SECRETS = {
    "API_KEY": "sekrit-api-key-4f1c",
    "DB_PASSWORD": "sekrit-db-password-9a2e",
    "AUTH_TOKEN": "sekrit-header-token-77b0",
    "CAMEL_KEY": "sekrit-camel-key-31d5",
}

SMOKE_SPEC = f"""\
name: reliability_smoke
algo: PPO
seed: 0
env:
  id: {KWARGS_ENV_ID}
  kwargs:
    API_KEY: {SECRETS["API_KEY"]}
    database: {{host: db.internal, DB_PASSWORD: {SECRETS["DB_PASSWORD"]}}}
    headers: [{{AUTH_TOKEN: {SECRETS["AUTH_TOKEN"]}}}]
    apiKey: {SECRETS["CAMEL_KEY"]}
    endpoint: "https://svc:${{env.kwargs.API_KEY}}@db.internal"
model: {{hidden: [16, 16]}}
stop: {{iterations: 2}}
checkpoint: {{every_iterations: 1, keep_last: 3}}
logging: {{wandb: offline, tensorboard: true}}
profiles:
  smoke: {{stop: {{iterations: 1}}}}
"""


def sets(overrides: list[str]) -> list[str]:
    """`["a=1", "b=2"]` -> `["--set", "a=1", "--set", "b=2"]`."""
    return [arg for item in overrides for arg in ("--set", item)]


def wait_for(predicate: Callable[[], Any], *, timeout_s: float, what: str, poll_s: float = 0.2):
    """Poll `predicate` until it returns something truthy; fail with `what` at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """Complete lines of metrics.jsonl (a line being written right now is ignored)."""
    path = run_dir / "metrics.jsonl"
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            rows.append(json.loads(line))
    return rows


def only_run_dir(out_dir: Path) -> Path | None:
    """The single run folder `<out>/<name>/<stamp>/` once it exists."""
    found = [p for p in out_dir.glob("*/*") if p.is_dir()]
    assert len(found) <= 1, f"expected one run folder under {out_dir}, found {found}"
    return found[0] if found else None


def flip_byte(path: Path, offset: int = -1) -> None:
    """Change one byte of a file in place (simulates tampering or bit rot)."""
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


# Ray's own patience for a starting node (default 30 s) is too short on a loaded shared machine.
RAY_PATIENCE = {"RAY_raylet_start_wait_time_s": "120"}


def child_env(base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of an `rlp` child: `base` (default: this process's), offline and quiet,
    patient with a slow Ray start. A background scenario passes the environment it was given
    (tests/background.py): `os.environ` changes under it while tests run."""
    env = dict(os.environ if base is None else base)
    env.update(
        {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "RAY_USAGE_STATS_ENABLED": "0"},
        **RAY_PATIENCE,
        **extra,
    )
    env.pop("RAY_ADDRESS", None)  # always an embedded local Ray, never someone's cluster
    return env


@dataclass
class TrainProcess:
    """A real `rlp train` subprocess in its own session, with output captured to files."""

    proc: subprocess.Popen
    out_dir: Path
    log_path: Path

    @classmethod
    def start(
        cls, args: list[str], *, out_dir: Path, log_dir: Path, env: dict[str, str] | None = None
    ) -> "TrainProcess":
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"rlp-{time.monotonic_ns()}.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [str(RLP), "train", *args, "--out", str(out_dir)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=child_env(env),
                cwd=REPO,
                start_new_session=True,
            )
        return cls(proc, out_dir, log_path)

    @property
    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def run_dir(self) -> Path | None:
        return only_run_dir(self.out_dir)

    def wait_for_iterations(self, count: int, *, timeout_s: float = 400.0) -> Path:
        def ready() -> Path | None:
            assert self.proc.poll() is None, f"rlp train exited early:\n{self.output[-3000:]}"
            run_dir = self.run_dir()
            return run_dir if run_dir and len(read_metrics(run_dir)) >= count else None

        return wait_for(ready, timeout_s=timeout_s, what=f"{count} iteration(s) in metrics.jsonl")

    def wait(self, *, timeout_s: float) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"rlp train still running {timeout_s:.0f} s later:\n{self.output[-3000:]}"
            ) from None

    def kill_tree(self) -> None:
        """SIGKILL the driver, then every process it had started (its Ray), nothing else."""
        psutil = importlib.import_module("psutil")  # bundled with Ray, imported above
        try:
            descendants = psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            descendants = []
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)  # Popen reaps its own child and keeps the real status
        for proc in descendants:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.send_signal(signal.SIGKILL)
        psutil.wait_procs(descendants, timeout=10)


@contextlib.contextmanager
def reaped(process: TrainProcess) -> Iterator[TrainProcess]:
    """Make sure a test never leaves its `rlp train` (and its Ray) running."""
    try:
        yield process
    finally:
        if process.proc.poll() is None:
            process.kill_tree()


@dataclass
class FakeWandb:
    """Stands in for the `wandb` module: records what `wandb.init` and `run.log` receive."""

    inits: list[dict[str, Any]] = field(default_factory=list)
    logged: list[dict[str, Any]] = field(default_factory=list)

    def module(self) -> types.ModuleType:
        module = types.ModuleType("wandb")
        module.init = self._init  # type: ignore[attr-defined]
        return module

    def _init(self, **kwargs: Any) -> Any:
        self.inits.append(kwargs)
        return types.SimpleNamespace(
            log=lambda data, step=None: self.logged.append(dict(data)), finish=lambda: None
        )


DUEL_SELFPLAY = REPO / "experiments" / "duel_selfplay.yaml"


def league_run_folder(tmp_path: Path) -> Path:
    """A duel league run folder: spec, league.json, one checkpoint of main (a 2-vector)."""
    import numpy as np

    from rl_platform.league import League
    from rl_platform.spec import load_spec
    from rl_platform.storage.checkpoints import CheckpointStore
    from rl_platform.storage.saved_spec import write_saved_spec

    run_dir = tmp_path / "league_run"
    spec = load_spec(DUEL_SELFPLAY)
    run_dir.mkdir()
    write_saved_spec(run_dir, spec)
    League(spec=spec.league, storage=run_dir / "league", seed=0)
    state = {"learner_group": {"learner": {"rl_module": {"main": {"w": np.zeros(2)}}}}}
    CheckpointStore(run_dir / "checkpoints").save(
        iteration=1, parts={"algorithm": state}, meta={"env_steps": 100}
    )
    return run_dir


def exit_2_in_one_line(result, *fragments: str) -> str:
    """A CLI result that is exit 2 with one line holding every fragment, no traceback; the
    line with its whitespace folded."""
    output = result.output
    assert result.exit_code == 2, output
    assert "Traceback" not in output and "unexpected error" not in output, output
    assert len(output.strip().splitlines()) == 1, output
    flat = " ".join(output.split())
    for fragment in fragments:
        assert fragment in flat, output
    return flat


STORED_RUN_KEYS = ["exp/20261125-101010", "exp/20261125-111111"]


def stored_runs(tmp_path: Path) -> Path:
    """A local storage root holding two uploaded runs (spec, metrics, one checkpoint each),
    made without Ray: `rlp pull` reads them."""
    bucket = tmp_path / "bucket"
    for key in STORED_RUN_KEYS:
        run_dir = tmp_path / "runs" / key
        run_dir.mkdir(parents=True)
        (run_dir / "spec.yaml").write_text("name: exp\n")
        (run_dir / "metrics.jsonl").write_text('{"iteration": 1}\n')
        parts = {"algorithm": {"w": np.ones((2, 2), dtype=np.float32)}}
        CheckpointStore(run_dir / "checkpoints").save(iteration=1, parts=parts, meta={})
        RunUploader(run_dir, storage=str(bucket), run_key=key, name="exp", job_id=None).at_end()
    return bucket
