"""Naming a callable in `env.id` is not running it: only env classes and factories annotated to
return one are ever called, so `os:system` in a spec runs no command at validation."""

import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import SpecError
from rl_platform.cli import app
from rl_platform.spec import validate_spec_data

NOT_ENVS = [
    ("os:system", lambda marker: {"command": f"touch {marker}"}, "not an env class"),
    ("subprocess:run", lambda marker: {"args": ["touch", str(marker)]}, "declared to return"),
    ("pathlib:Path", lambda marker: {}, "class Path is not an env"),
    (
        "tests.fixtures.corridor_env:write_marker",
        lambda marker: {"path": str(marker)},
        "declared to return nothing",
    ),
]


def _spec(env_id: str, kwargs: dict) -> dict:
    return {"name": "named_code", "algo": "PPO", "env": {"id": env_id, "kwargs": kwargs}}


@pytest.mark.parametrize(("env_id", "kwargs_for", "reason"), NOT_ENVS)
def test_validation_calls_nothing_that_is_not_an_env(tmp_path, env_id, kwargs_for, reason) -> None:
    marker = tmp_path / "marker"
    with pytest.raises(SpecError) as caught:
        validate_spec_data(_spec(env_id, kwargs_for(marker)))
    assert not marker.exists(), f"validating env.id {env_id} ran it"
    assert len(caught.value.problems) == 1
    problem = caught.value.problems[0]
    assert f"env.id: {env_id!r}" in problem and reason in problem and "\n" not in problem


def test_rlp_validate_on_os_system_exits_2_and_runs_nothing(tmp_path) -> None:
    marker = tmp_path / "marker"
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        f"name: x\nalgo: PPO\nenv: {{id: 'os:system', kwargs: {{command: 'touch {marker}'}}}}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(spec)])
    assert result.exit_code == 2, result.output
    assert not marker.exists()
    assert [line for line in result.output.splitlines() if line.strip()] == [
        line for line in result.output.splitlines() if "os:system" in line
    ]
