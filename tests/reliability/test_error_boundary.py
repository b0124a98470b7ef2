"""Check 17.5: one error boundary for every CLI verb.

User-caused failures (bad numbers, files the OS refuses, damaged league files, league ids that
belong to the trainer) are one `error:` line with exit 2; an unexpected exception is one line
naming a saved crash report (exit 70), never a raw traceback. None of these start Ray.
"""

import json
from pathlib import Path

import pytest
import torch
import typer
from typer.testing import CliRunner

from rl_platform.base.errors import UserError
from rl_platform.cli import app
from rl_platform.commands.error_boundary import INTERNAL_ERROR_EXIT, user_errors
from rl_platform.league import League, LeagueSpec
from rl_platform.league.fit import check_same_setup
from rl_platform.spec import load_spec
from rl_platform.storage.saved_spec import write_saved_spec
from rl_platform.tournament.league_edit import source_spec
from tests.reliability.support import CARTPOLE, REPO


def _registered_callbacks(typer_app: typer.Typer, prefix: str = "") -> dict[str, object]:
    found = {}
    for info in typer_app.registered_commands:
        name = info.name or info.callback.__name__.removesuffix("_command").replace("_", "-")
        found[f"{prefix}{name}"] = info.callback
    for group in typer_app.registered_groups:
        found.update(_registered_callbacks(group.typer_instance, f"{prefix}{group.name} "))
    return found


def test_every_cli_verb_is_behind_the_error_boundary():
    callbacks = _registered_callbacks(app)
    assert len(callbacks) >= 20, sorted(callbacks)
    unguarded = [
        name
        for name, callback in callbacks.items()
        if not getattr(callback, "error_boundary", False)
    ]
    assert unguarded == []


def _one_error_line(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


# A bad number is refused by the option itself, before any env, policy or Ray is touched.
BAD_NUMBERS = {
    "eval_parallel_0": (["eval", "random", "--env", "cartpole", "--parallel", "0"], "--parallel"),
    "eval_seed_negative": (["eval", "random", "--env", "cartpole", "--seed", "-1"], "--seed"),
    "eval_no_episodes": (["eval", "random", "--env", "cartpole", "-n", "0"], "--episodes"),
    "eval_max_steps_0": (["eval", "random", "--env", "cartpole", "--max-steps", "0"], "--max-st"),
    "watch_fps_nan": (["watch", "random", "--env", "cartpole", "--fps", "nan"], "--fps"),
    "watch_fps_inf": (["watch", "random", "--env", "cartpole", "--fps", "inf"], "--fps"),
    "watch_fps_0": (["watch", "random", "--env", "cartpole", "--fps", "0"], "--fps"),
    "watch_scale_0": (["watch", "random", "--env", "cartpole", "--scale", "0"], "--scale"),
    "record_parallel_0": (
        ["record", "scripted://rlp/Duel-v0/based", "--env", "duel", "--parallel", "0"],
        "--parallel",
    ),
    "run_proportion_inf": (["run", "-p", "random,proportion=inf", "--env", "duel"], "proportion"),
    "run_proportion_nan": (["run", "-p", "random,proportion=nan", "--env", "duel"], "proportion"),
    "tournament_seed_negative": (["league", "tournament", ".", "--seed", "-1"], "--seed"),
}


@pytest.mark.parametrize("case", sorted(BAD_NUMBERS))
def test_out_of_range_numbers_exit_2_naming_the_option(case):
    args, option = BAD_NUMBERS[case]
    _one_error_line(CliRunner().invoke(app, args), option)


def test_an_out_folder_that_is_a_file_is_one_line_naming_it(tmp_path):
    not_a_folder = tmp_path / "runs"
    not_a_folder.write_text("a file\n")
    result = CliRunner().invoke(app, ["train", str(CARTPOLE), "--out", str(not_a_folder)])
    _one_error_line(result, str(not_a_folder), "not a directory")
    assert not_a_folder.read_text() == "a file\n"


def test_an_unexpected_exception_is_one_line_and_a_saved_masked_report(tmp_path, monkeypatch):
    secret = "s3cr3t-value-123456"
    monkeypatch.setenv("RLP_CRASH_DIR", str(tmp_path / "crashes"))
    monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    broken = typer.Typer()

    @broken.command()
    @user_errors
    def explode() -> None:
        raise RuntimeError(f"state machine confused by {secret}")

    @broken.command()
    @user_errors
    def other() -> None:  # a second command keeps Typer from collapsing the app into one
        pass

    result = CliRunner().invoke(broken, ["explode"])
    assert result.exit_code == INTERNAL_ERROR_EXIT
    assert "Traceback" not in result.output and secret not in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    reports = list((tmp_path / "crashes").glob("crash-*.txt"))
    assert len(reports) == 1 and str(reports[0]) in result.output.replace("\n", "")
    report = reports[0].read_text()
    assert "Traceback (most recent call last)" in report and "RuntimeError" in report
    assert secret not in report


DAMAGED_MANIFESTS = {
    "truncated": '{"version": 1, "memb',
    "no_members": '{"version": 1}',
    "members_not_a_list": '{"version": 1, "members": 5}',
    "member_not_an_object": '{"version": 1, "members": [5]}',
    "member_id_not_a_string": '{"version": 1, "members": [{"id": 3}]}',
    "state_not_an_object": '{"version": 1, "members": [], "state": 3}',
    "not_utf8": b'{"version": 1, "members": ["\xff"]}',
}


@pytest.mark.parametrize("case", sorted(DAMAGED_MANIFESTS))
def test_a_damaged_league_manifest_is_one_line(case, tmp_path):
    manifest = tmp_path / "run" / "league" / "league.json"
    manifest.parent.mkdir(parents=True)
    content = DAMAGED_MANIFESTS[case]
    if isinstance(content, bytes):
        manifest.write_bytes(content)
    else:
        manifest.write_text(content)
    before = manifest.read_bytes()
    result = CliRunner().invoke(app, ["league", "show", str(tmp_path / "run")])
    _one_error_line(result, "league.json")
    assert manifest.read_bytes() == before


def _league(tmp_path: Path) -> League:
    spec = LeagueSpec.model_validate(
        {"scripted": ["based"], "opponent_mix": {"self_play": 0.5, "based": 0.5}}
    )
    return League(spec=spec, storage=tmp_path / "league", seed=0)


@pytest.mark.parametrize("member_id", ["main_v1", "main_v12"])
def test_an_added_member_may_not_take_a_future_snapshot_id(member_id, tmp_path):
    league = _league(tmp_path)
    weights = {"w": torch.zeros(2)}
    with pytest.raises(UserError, match="reserved for snapshots of 'main'"):
        league.add_checkpoint(member_id=member_id, weights=weights)
    assert member_id not in league.pool
    league.add_checkpoint(member_id="main_v1_frozen", weights=weights)  # not the pattern
    assert json.loads((tmp_path / "league" / "league.json").read_text())["members"]


def _run_folder(root: Path, spec_path: Path, *overrides: str) -> Path:
    run_dir = root / spec_path.stem
    (run_dir / "checkpoints" / "iter_000001").mkdir(parents=True)
    write_saved_spec(run_dir, load_spec(spec_path, overrides=list(overrides)))
    return run_dir


def test_a_policy_of_another_env_cannot_join_a_league_without_checkpoints(tmp_path):
    duel = load_spec(REPO / "experiments" / "duel_selfplay.yaml")
    cartpole_run = _run_folder(tmp_path, CARTPOLE)
    with pytest.raises(UserError, match="trained on CartPole-v1; this league plays"):
        check_same_setup(
            cartpole_run / "checkpoints" / "iter_000001",
            source_spec(cartpole_run / "checkpoints" / "iter_000001"),
            duel,
        )

    other_model = _run_folder(
        tmp_path, REPO / "experiments" / "duel_selfplay.yaml", "model.hidden=[8]"
    )
    with pytest.raises(UserError, match="model"):
        check_same_setup(
            other_model / "checkpoints" / "iter_000001",
            source_spec(other_model / "checkpoints" / "iter_000001"),
            duel,
        )

    orphan = tmp_path / "copied" / "iter_000001"
    orphan.mkdir(parents=True)
    with pytest.raises(UserError, match="cannot check that it fits"):
        check_same_setup(orphan, source_spec(orphan), duel)


@pytest.mark.parametrize(
    "address", ["not a url", "ftp://head:8265", "http://head:99999", "http://"]
)
def test_a_bad_job_server_address_is_one_line(address):
    result = CliRunner().invoke(app, ["jobs", "list", "--address", address])
    _one_error_line(result, "--address", "not a job server address")


@pytest.mark.parametrize("address", ["http://127.0.0.1:8265", "head:8265", "ray://h:10001", "auto"])
def test_the_address_forms_rays_job_client_takes_are_accepted(address):
    from rl_platform.jobs.client import resolve_address

    assert resolve_address(address) == address


def test_search_resume_of_a_training_run_is_one_line(tmp_path):
    run_dir = _run_folder(tmp_path, CARTPOLE)
    result = CliRunner().invoke(app, ["search", "--resume", str(run_dir)])
    _one_error_line(result, str(run_dir))
