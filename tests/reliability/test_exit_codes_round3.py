"""Round 3, item 9: bad input that used to reach exit 70 (a crash) is one line and exit 2.

Each case is what a hostile user tried: a `_base` symlink loop, out-of-range seeds, nested
`${oc.env:...}` defaults, a binary `latest` pointer, an overflowing `--seed`, an env whose
observations do not match its space, damaged league state, and secrets that reached an error
line or W&B. All in-process through Typer's CliRunner; none starts Ray.
(`model.hidden: [1e8]` is left to the size checks of item 5; `rlp league tournament --out` is
in test_shared_state.py.)
"""

import json
import os
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.league import League, LeagueSpec
from rl_platform.storage.checkpoints import CheckpointStore

SECRET = "sekrit-round3-7f2a"
SPEC = "name: round3\nenv: {id: CartPole-v1}\n"
USER_ACT = "scripted://tests.reliability.faulty_envs:push_against_the_pole"
SHORT_OBS_ENV = "tests.reliability.faulty_envs:ShortObservationCartPole"


def _exit_2(result, *fragments: str) -> str:
    output = result.output
    assert result.exit_code == 2, output
    assert "Traceback" not in output and "unexpected error" not in output, output
    assert len(output.strip().splitlines()) == 1, output
    flat = output.replace("\n", "")
    for fragment in fragments:
        assert fragment in flat, output
    return output


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _nested_env_defaults(depth: int) -> str:
    value = "1"
    for i in range(depth):
        value = f"${{oc.env:RLP_UNSET_{i},{value}}}"
    return value


SPECS = {
    # Each: (spec text, fragments the one line must hold).
    "seed_1e30": (SPEC + "seed: 1e30\n", ["seed"]),
    "seed_2_to_the_32": (SPEC + "seed: 4294967296\n", ["seed", "4294967296"]),
    "seed_negative": (SPEC + "seed: -1\n", ["seed"]),
    "evaluation_seed_2_to_the_32": (
        SPEC + "evaluation: {every_env_steps: 1000, seed: 4294967296}\n",
        ["evaluation.seed"],
    ),
    "nested_env_defaults": (SPEC + f'seed: "{_nested_env_defaults(300)}"\n', ["seed"]),
    "secret_in_the_project": (
        SPEC + f"vars: {{API_KEY: {SECRET}}}\nlogging: {{project: 'p-${{vars.API_KEY}}'}}\n",
        ["logging.project", "secret"],
    ),
    "secret_in_the_name": (
        "name: 'r-${env.kwargs.apiKey}'\n"
        f"env: {{id: {SHORT_OBS_ENV}, kwargs: {{apiKey: {SECRET}}}}}\n",
        ["name", "secret"],
    ),
}


@pytest.mark.parametrize("case", sorted(SPECS))
def test_a_bad_spec_value_is_one_line_naming_the_field(case, tmp_path):
    text, fragments = SPECS[case]
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    output = _exit_2(_invoke("validate", str(spec)), *fragments)
    assert SECRET not in output
    # `rlp train` refuses it the same way, before a run folder exists.
    output = _exit_2(_invoke("train", str(spec), "--out", str(tmp_path / "runs")), *fragments)
    assert SECRET not in output and not (tmp_path / "runs").exists()


def test_a_base_that_is_a_symlink_loop_is_one_line(tmp_path):
    os.symlink(tmp_path / "b.yaml", tmp_path / "a.yaml")
    os.symlink(tmp_path / "a.yaml", tmp_path / "b.yaml")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC + "_base: a.yaml\n")
    _exit_2(_invoke("validate", str(spec)), "a.yaml", "symbolic link")
    _exit_2(_invoke("validate", str(tmp_path / "a.yaml")), "a.yaml", "symbolic link")


@pytest.mark.parametrize(
    "override",
    [
        # A secret interpolated into a field whose check quotes the value.
        [f"vars.DB_PASSWORD={SECRET}", "training.lr=${vars.DB_PASSWORD}"],
        [f"vars.AUTH_TOKEN={SECRET}", "training.gamma=${vars.AUTH_TOKEN}"],
    ],
)
def test_a_secret_given_through_set_is_masked_in_the_error_line(override, tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    sets = [arg for item in override for arg in ("--set", item)]
    output = _exit_2(_invoke("validate", str(spec), *sets))
    assert SECRET not in output and "***" in output


def _fake_checkpoint(run_dir: Path) -> None:
    state = {"learner_group": {"learner": {"rl_module": {"main": {"w": np.zeros(2)}}}}}
    CheckpointStore(run_dir / "checkpoints").save(
        iteration=1, parts={"algorithm": state}, meta={"env_steps": 10}
    )


def test_a_binary_latest_pointer_falls_back_to_the_newest_complete_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / "checkpoints").mkdir(parents=True)
    (run_dir / "checkpoints" / "latest").write_bytes(b"\xff\xfe\x00garbage\x81")
    _exit_2(_invoke("export", str(run_dir), str(tmp_path / "p.safetensors")), "no complete")
    _fake_checkpoint(run_dir)
    (run_dir / "checkpoints" / "latest").write_bytes(b"\xff\xfe\x00garbage\x81")
    assert CheckpointStore(run_dir / "checkpoints").latest().name == "iter_000001"
    result = _invoke("export", str(run_dir), str(tmp_path / "p.safetensors"))
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("verb", ["eval", "run", "watch"])
@pytest.mark.parametrize("seed", ["4294967296", "99999999999999999999999"])
def test_an_overflowing_seed_option_is_a_usage_error(verb, seed):
    policy = ["-p", "random"] if verb == "run" else ["random"]
    result = _invoke(verb, *policy, "--env", "cartpole", "-n", "1", "--seed", seed)
    assert result.exit_code == 2, result.output
    assert "--seed" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("verb", ["run", "eval"])
def test_an_observation_of_the_wrong_size_names_the_env_and_the_shapes(verb):
    policy = ["-p", USER_ACT] if verb == "run" else [USER_ACT]
    result = _invoke(verb, *policy, "--env", SHORT_OBS_ENV, "-n", "1")
    _exit_2(result, SHORT_OBS_ENV, "reset", "(2,)", "(4,)")


GOOD_STATE = {"version": 1, "rng": "{}", "slots": [None]}
DAMAGED_STATES = {
    "state_a_list": [],
    "results_a_list": {**GOOD_STATE, "results": []},
    "window_a_string": {**GOOD_STATE, "results": {"window": "abc"}},
    "learners_a_string": {**GOOD_STATE, "results": {"window": 5, "learners": "x"}},
    "pair_without_counts": {**GOOD_STATE, "results": {"window": 5, "pairs": {"main": {"x": {}}}}},
    "env_steps_a_string": {**GOOD_STATE, "env_steps": "x"},
    "slots_a_number": {**GOOD_STATE, "slots": 3},
    "no_rng": {"version": 1, "slots": []},
}


def _league_folder(tmp_path: Path, state: object) -> Path:
    run_dir = tmp_path / "run"
    (run_dir / "league").mkdir(parents=True)
    manifest = {"version": 1, "members": [], "state": state}
    (run_dir / "league" / "league.json").write_text(json.dumps(manifest))
    return run_dir


@pytest.mark.parametrize("case", sorted(DAMAGED_STATES))
def test_damaged_league_state_is_one_line_naming_league_json(case, tmp_path):
    run_dir = _league_folder(tmp_path, DAMAGED_STATES[case])
    manifest = run_dir / "league" / "league.json"
    before = manifest.read_bytes()
    _exit_2(_invoke("league", "show", str(run_dir)), "league.json")
    spec = LeagueSpec.model_validate({"scripted": ["based"]})
    with pytest.raises(UserError, match=r"league\.json"):  # what `rlp train --resume` opens
        League(spec=spec, storage=run_dir / "league", seed=0)
    assert manifest.read_bytes() == before
