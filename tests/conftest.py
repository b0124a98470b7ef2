"""Shared fixtures: one session-scoped local Ray, and small-spec helpers.

`address="local"` always starts a fresh embedded Ray and never joins a stale cluster.
"""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
EXPERIMENTS = REPO_ROOT / "experiments"

# Keep tests offline and quiet: W&B never phones home, Ray never asks about usage stats.
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("WANDB_SILENT", "true")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# One torch (OpenMP) thread per process, here and in every child and Ray worker: on 2 cores
# shared with Ray workers and the background scenarios (tests/background.py), torch's 2-thread
# pool spins against them; one small LSTM step took 28 ms with 2 threads vs 0.9 ms with 1 under
# load (docs/modules.md). Set before anything imports torch.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# As `import rl_platform` sets it, but here whichever test module imports Ray first: under
# `uv run pytest` Ray would otherwise start every worker of the session Ray through `uv run` in
# a zipped copy of the repo (test_local_ray_workers.py).
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")


@pytest.fixture(scope="session")
def ray_local() -> Iterator[None]:
    """The one Ray of the test session (a Ray start costs ~10 s on 2 cores): tests that train
    in-process share it; only tests that need a Ray of their own start one in a child.

    No job-level runtime_env here (e.g. a `worker_process_setup_hook`, even a no-op one): with
    one, every new worker (trial actor, remote env runner) took ~3.5 s longer to start on 2 cores.
    """
    import ray

    if not ray.is_initialized():
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture
def write_spec(tmp_path: Path):
    """Write YAML text to a file in tmp_path and return its path."""

    def _write(text: str, name: str = "spec.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return _write


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/gpu/ only where torch sees a CUDA GPU (the `gpu` marker, tests/gpu/conftest.py)."""
    if collection_path.name == "gpu" and collection_path.parent == REPO_ROOT / "tests":
        import torch

        return not torch.cuda.is_available()
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that read background scenarios run last (tests/background.py)."""
    move_background_tests_last(items)


# The token-auth Ray head and its smoke job, for tests/integration and tests/reliability, and
# the background scenarios (`background`, autouse); imported after the environment defaults
# above, which they rely on.
from tests.background import background, move_background_tests_last  # noqa: E402, F401
from tests.token_head import ray_head, smoke_job  # noqa: E402, F401 - pytest fixtures
