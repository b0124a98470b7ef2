"""A user's env that breaks is reported as the user's: one line naming the env, the call, the
agent and the step, exit 2; at once when it breaks on its first steps (before Ray starts, no run
folder), and with the last checkpoint kept when it breaks mid-run."""

import time

import pytest
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.envs.user_env_checks import CheckedEnv, UserEnvError
from rl_platform.run.train import train
from rl_platform.spec import validate_spec_data
from tests.fixtures import broken_user_envs

MODULE = "tests.fixtures.broken_user_envs"
BROKEN = [
    ("StepRaises", "raised ValueError: the simulator lost its connection (at "),
    ("NaNObservation", "returned a non-finite observation"),
    ("WrongShape", "returned an observation of shape (3,), expected (4,)"),
    ("OldGymApi", "returned 4 values; Gymnasium's step returns (observation, reward"),
    ("StringReward", "returned a reward '1.0'; a reward is one number"),
]


@pytest.mark.parametrize(("name", "what"), BROKEN)
def test_each_broken_call_is_one_line_naming_env_call_agent_and_step(name, what) -> None:
    env = CheckedEnv(getattr(broken_user_envs, name)(after=2), f"{MODULE}:{name}")
    env.reset(seed=0)
    env.step(0), env.step(1)
    with pytest.raises(UserEnvError) as caught:
        env.step(0)
    text = str(caught.value)
    assert text.startswith(f"env {MODULE}:{name}: step() (agent 'agent', step 3 of the episode) ")
    assert what in text and "\n" not in text


def _spec_file(tmp_path, name: str, after: int):
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: broken\nalgo: PPO\nenv: {{id: '{MODULE}:{name}', kwargs: {{after: {after}}}}}\n"
        "model: {hidden: [8]}\nstop: {iterations: 4}\n"
    )
    return spec


@pytest.mark.parametrize(("name", "what"), BROKEN)
def test_rlp_train_refuses_an_env_broken_from_the_start_in_seconds(tmp_path, name, what) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(
        app, ["train", str(_spec_file(tmp_path, name, after=0)), "--out", str(tmp_path / "runs")]
    )
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"{MODULE}:{name}: step()" in lines[0] and what in lines[0]
    assert time.monotonic() - started < 5.0
    assert not (tmp_path / "runs").exists()  # nothing written for a run that never started


def test_an_env_that_breaks_mid_run_stops_with_its_line_and_keeps_the_checkpoints(
    ray_local, tmp_path
) -> None:
    spec = validate_spec_data(
        {
            "name": "breaks_later",
            "algo": "PPO",
            "env": {"id": f"{MODULE}:OldGymApi", "kwargs": {"after": 450}, "envs_per_runner": 1},
            "model": {"hidden": [8]},
            "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
            "resources": {"env_runners": 0},
            "stop": {"iterations": 5},
            "checkpoint": {"every_iterations": 1},
            "logging": {"wandb": "off", "tensorboard": False},
        }
    )
    with pytest.raises(UserEnvError, match=r"OldGymApi: step\(\) \(agent 'agent', step \d+"):
        train(spec, out_dir=tmp_path / "runs")
    (checkpoints,) = (tmp_path / "runs").glob("breaks_later/*/checkpoints")
    kept = sorted(p.name for p in checkpoints.iterdir() if p.name.startswith("iter_"))
    assert kept == ["iter_000001", "iter_000002"]  # 400 steps were whole; the 451st broke
    assert (checkpoints / "latest").read_text().strip() == "iter_000002"


def test_a_multi_agent_env_that_raises_is_named_as_the_users(ray_local, tmp_path) -> None:
    spec = validate_spec_data(
        {
            "name": "pennies_break",
            "algo": "PPO",
            "env": {"id": f"{MODULE}:PenniesThatBreak", "kwargs": {"after": 300}},
            "model": {"hidden": [8]},
            "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
            "resources": {"env_runners": 0},
            "stop": {"iterations": 5},
            "logging": {"wandb": "off", "tensorboard": False},
        }
    )
    with pytest.raises(UserEnvError) as caught:
        train(spec, out_dir=tmp_path / "runs")
    text = str(caught.value)
    assert text.startswith(f"env {MODULE}:PenniesThatBreak: step() raised KeyError")
    assert "the referee left" in text and "broken_user_envs.py" in text and "\n" not in text
