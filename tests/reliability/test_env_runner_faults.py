"""Check 11: an env that crashes its (remote) env runner a few times does not end training: the
runner is restarted at once and training goes on. Past the restart limit the run stops with a
clear message instead of spinning through empty iterations."""

from pathlib import Path

import pytest
from ray.tune.registry import register_env

from rl_platform.base.errors import TrainingHealthError
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.run.train import train
from rl_platform.spec import load_spec
from tests.reliability.faulty_envs import FLAKY_ENV_NAME, failure_count, make_flaky
from tests.reliability.support import CARTPOLE, TINY

STEPS = 400
# One remote env runner; stop on env steps (empty iterations while a runner restarts do not
# count), with a wall-clock backstop so a runner that never comes back cannot hang the suite.
REMOTE_RUNNER = [
    *TINY,
    "resources.env_runners=1",
    "resources.cpus_per_env_runner=0.5",
    "stop.iterations=null",
    f"stop.env_steps={STEPS}",
    "stop.minutes=4",
    "checkpoint.every_iterations=null",
    "checkpoint.at_end=false",
]


def _spec():
    return load_spec(CARTPOLE, profile="smoke", overrides=REMOTE_RUNNER)


def _flaky_env(count_file: Path, *, fail_times: int, max_restarts: int | None = None):
    """Config extension: sample from an env that raises on its first step, `fail_times` times."""
    register_env(FLAKY_ENV_NAME, make_flaky)
    env_config = {"count_file": str(count_file), "fail_after": 0, "fail_times": fail_times}

    def extend(config, spec):
        config = config.environment(env=FLAKY_ENV_NAME, env_config=env_config)
        if max_restarts is not None:
            config = config.fault_tolerance(max_num_env_runner_restarts=max_restarts)
        return config

    return extend


def test_adapter_restarts_failed_env_runners_immediately():
    config = build_algorithm_config(_spec())
    assert config.restart_failed_env_runners is True
    assert config.max_num_env_runner_restarts == 3
    assert config.delay_between_env_runner_restarts_s == 0
    assert config.num_env_runners == 1


def test_crashing_env_runner_is_restarted_and_training_continues(tmp_path, ray_local):
    count_file = tmp_path / "failures"
    # One crash, within the adapter's limit of 3 (each restart is a new actor, ~4 s here; the
    # test below covers restarts up to the limit and beyond it).
    extension = _flaky_env(count_file, fail_times=1)
    result = train(_spec(), out_dir=tmp_path / "runs", extensions=[extension])
    assert failure_count(count_file) == 1  # the env really crashed its runner
    assert result.stop_reason == f"env_steps >= {STEPS}", result.stop_reason
    assert result.env_steps >= STEPS


@pytest.mark.timeout(420)
def test_env_runner_failures_above_the_restart_limit_stop_the_run(tmp_path, ray_local):
    # The adapter's limit is 3 (checked above); 1 here keeps the test to two runner starts.
    count_file = tmp_path / "failures"
    extension = _flaky_env(count_file, fail_times=1000, max_restarts=1)
    with pytest.raises(TrainingHealthError) as info:
        train(_spec(), out_dir=tmp_path / "runs", extensions=[extension])
    message = str(info.value)
    assert "env runner" in message and "restarted the maximum 1 time" in message
    assert failure_count(count_file) == 2  # the first start plus one restart, then given up
