"""Issue #59 C: a resume whose spec cannot fit the run's checkpoint (another `model`, algorithm,
env, observation space or league module set) is refused from the run's `spec.yaml` alone, in
one line naming each differing key with both values, before Ray starts (no Ray here)."""

import sys
from pathlib import Path

import pytest

from rl_platform.base.errors import UserError
from rl_platform.rllib.facts import run_facts
from rl_platform.run.resume import check_checkpoint_fits
from rl_platform.spec import load_spec
from rl_platform.storage.saved_spec import write_saved_spec

CORRIDOR = "tests.fixtures.corridor_env:CorridorEnv"
SPEC = f"""
name: fits
env: {{id: '{CORRIDOR}', kwargs: {{length: 5, max_steps: 50}}}}
model: {{hidden: [16, 16]}}
stop: {{iterations: 2}}
"""


def _run_of(tmp_path: Path, write_spec) -> Path:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    write_saved_spec(run_dir, load_spec(write_spec(SPEC)))  # secrets masked, as on disk
    return run_dir


def _check(run_dir: Path, write_spec, *overrides: str) -> None:
    spec = load_spec(write_spec(SPEC, name="resumed.yaml"), overrides=list(overrides))
    check_checkpoint_fits(run_dir, spec, facts=run_facts(spec))


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        (["model.hidden=[32,32]"], ["model.hidden [16, 16] (the spec says [32, 32])"]),
        (
            ["model.hidden=[16]", "model.activation=relu"],
            ["model.hidden [16, 16] (the spec says [16])", "model.activation 'tanh' (the spec"],
        ),
        (["algo=APPO"], ["algo 'PPO' (the spec says 'APPO')"]),
        (["env.wrappers=[flatten_obs]"], ["env.wrappers [] (the spec says ['flatten_obs'])"]),
        (
            ["env.kwargs.length=7"],
            [
                "env.kwargs.length 5 (the spec says 7)",
                "observation space Box(0.0, 1.0, (5,), float32) (the spec says Box(0.0, 1.0, "
                "(7,), float32))",
            ],
        ),
    ],
)
def test_a_resume_that_cannot_fit_names_each_key_with_both_values(
    tmp_path, write_spec, overrides, named
):
    run_dir = _run_of(tmp_path, write_spec)
    saved = (run_dir / "spec.yaml").read_bytes()
    with pytest.raises(UserError) as refused:
        _check(run_dir, write_spec, *overrides)
    line = str(refused.value)
    assert "\n" not in line and line.startswith(f"--resume: {run_dir} was trained with ")
    for part in named:
        assert part in line, line
    assert f"rlp train {run_dir / 'spec.yaml'} --resume {run_dir}" in line
    assert (run_dir / "spec.yaml").read_bytes() == saved


@pytest.mark.parametrize(
    "overrides",
    [[], ["training.lr=0.001"], ["env.kwargs.max_steps=80"], ["stop.iterations=9"]],
)
def test_a_resume_that_fits_passes(tmp_path, write_spec, overrides):
    """Rewards, limits, learning rates and stops do not touch the checkpoint's shapes; a
    saved spec read back is no change."""
    _check(_run_of(tmp_path, write_spec), write_spec, *overrides)


def test_the_check_starts_no_ray(tmp_path, write_spec):
    run_dir = _run_of(tmp_path, write_spec)
    with pytest.raises(UserError):
        _check(run_dir, write_spec, "model.hidden=[32,32]")
    ray = sys.modules.get("ray")
    assert ray is None or not ray.is_initialized()
