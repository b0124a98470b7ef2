"""Sizes a machine cannot hold are refused before Ray starts: one line naming the setting, the
estimate and the machine's memory, exit 2, no run folder (they once ran until the kernel killed
them, exit 137)."""

import time

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.run.machine_fit import GIB, MachineFitError, RunSizes, check_fits
from tests.reliability.support import CARTPOLE, TINY, sets

CARTPOLE_SIZES = RunSizes(
    train_batch_size=4000,
    minibatch_size=128,
    envs_per_runner=16,
    env_runners=0,
    observation_floats=4,
    layer_widths=(4, 64, 64, 2),
)


def test_a_normal_run_fits_a_small_machine() -> None:
    check_fits(CARTPOLE_SIZES, memory_bytes=2 * GIB)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"train_batch_size": 10**12}, "training.train_batch_size"),
        ({"envs_per_runner": 10**7}, "env.envs_per_runner"),
        ({"env_runners": 10**4}, "resources.env_runners"),
        ({"layer_widths": (4, 10**8, 2)}, "model"),
    ],
)
def test_the_largest_term_is_named_with_the_estimate_and_the_limit(change, named) -> None:
    sizes = RunSizes(**(CARTPOLE_SIZES.__dict__ | change))
    with pytest.raises(MachineFitError) as caught:
        check_fits(sizes, memory_bytes=24 * GIB)
    text = str(caught.value)
    assert text.startswith(f"{named}: this run needs at least ") and "\n" not in text
    assert "this machine has 24 GiB" in text


def test_remote_env_runners_of_a_cluster_are_not_counted_here() -> None:
    sizes = RunSizes(**(CARTPOLE_SIZES.__dict__ | {"env_runners": 10**3}))
    with pytest.raises(MachineFitError):
        check_fits(sizes, memory_bytes=24 * GIB)
    check_fits(RunSizes(**(sizes.__dict__ | {"remote_runners_here": False})), memory_bytes=24 * GIB)


@pytest.mark.parametrize(
    ("setting", "named"),
    [
        ("training.train_batch_size=1e12", "training.train_batch_size"),
        ("env.envs_per_runner=1e7", "env.envs_per_runner"),
        ("resources.env_runners=1e4", "resources.env_runners"),
        ("model.hidden=[1e8]", "model"),
        ("training.num_epochs=1e9", "training.num_epochs"),
    ],
)
def test_rlp_train_refuses_absurd_sizes_at_once(tmp_path, setting, named) -> None:
    started = time.monotonic()
    out = tmp_path / "runs"
    args = ["train", str(CARTPOLE), *sets([*TINY, setting]), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], result.output
    assert time.monotonic() - started < 5.0
    assert not out.exists()
