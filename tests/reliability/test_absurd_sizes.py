"""Sizes a machine cannot hold are refused before Ray starts: one line naming the setting, the
estimate and the machine's memory, exit 2, no run folder (they once ran until the kernel killed
them, exit 137)."""

import subprocess
import time

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.run import env_runner_fit
from rl_platform.run.machine_fit import GIB, MachineFitError, RunSizes, check_fits
from rl_platform.spec import load_spec
from tests.reliability.support import (
    CARTPOLE,
    REPO,
    RLP,
    TINY,
    TrainProcess,
    child_env,
    reaped,
    sets,
    wait_for,
)

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


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (["resources.env_runners=64"], "resources.env_runners: 64 remote env runners"),
        (
            ["resources.env_runners=3", "resources.cpus_per_env_runner=1"],
            "resources.env_runners: 3 remote env runners",
        ),
        (
            ["resources.env_runners=1", "resources.custom_resources_per_env_runner={gpu_box: 1}"],
            "resources.custom_resources_per_env_runner",
        ),
    ],
    ids=["64_runners", "3_runners", "custom_resource"],
)
def test_env_runners_a_local_ray_cannot_start_are_refused_before_training(
    tmp_path, monkeypatch, settings, named
) -> None:
    """Once they waited silently forever for CPUs (or a node) that never come."""
    monkeypatch.setattr(env_runner_fit, "local_ray_cpus", lambda: 2.0)  # this test's machine
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    out = tmp_path / "runs"
    args = ["train", str(CARTPOLE), *sets([*TINY, *settings]), "--out", str(out)]
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], result.output
    if "custom" not in named:
        assert "this machine's Ray has 2 CPUs" in " ".join(lines[0].split())
    assert time.monotonic() - started < 10 and not out.exists()


def test_env_runners_that_fit_the_cpus_or_a_cluster_pass(monkeypatch) -> None:
    spec = load_spec(CARTPOLE, overrides=["resources.env_runners=4"])
    env_runner_fit.check_env_runners_fit(spec, cpus=4.0)  # 4 x 1 CPU on 4 CPUs
    halves = load_spec(
        CARTPOLE, overrides=["resources.env_runners=4", "resources.cpus_per_env_runner=0.5"]
    )
    env_runner_fit.check_env_runners_fit(halves, cpus=2.0)
    with pytest.raises(UserError, match="Use at most 3 env runners"):
        env_runner_fit.check_env_runners_fit(spec, cpus=3.0)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")  # a cluster may add nodes: not refused
    env_runner_fit.check_env_runners_fit(spec, cpus=1.0)


def test_on_a_cluster_short_of_cpus_a_line_says_what_waits_for_which_resource(
    ray_local, tmp_path
) -> None:
    """Joining a cluster (here the session's 2-CPU Ray) with 3 env runners of 1 CPU each: not
    refused (an autoscaler could add a node), but within RLP_RESOURCE_WAIT_S (lowered to 2 s;
    30 s by default) a line says what waits for which resource; once it waited silently."""
    import ray

    env = child_env(RLP_RESOURCE_WAIT_S="2")
    env["RAY_ADDRESS"] = ray.get_runtime_context().gcs_address  # child_env drops it
    settings = [*TINY, "resources.env_runners=3", "resources.cpus_per_env_runner=1"]
    args = [str(RLP), "train", str(CARTPOLE), *sets(settings), "--out", str(tmp_path / "runs")]
    log = tmp_path / "rlp.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True
        )
    with reaped(TrainProcess(proc, tmp_path / "runs", log)) as run:
        started = time.monotonic()
        line = wait_for(
            lambda: next((x for x in run.output.splitlines() if "still starting" in x), None),
            timeout_s=120,
            what="the line about resources",
        )
        waited = time.monotonic() - started
    flat = " ".join(line.split())
    assert "resources.env_runners 3" in flat and "each wait for CPU 1" in flat, flat
    assert "Ray has free now: CPU" in flat and "of 2" in flat, flat
    assert waited < 90
