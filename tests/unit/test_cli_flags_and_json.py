"""The CLI's shared flags and machine-readable output, without a cluster or a Ray start:
`rlp submit -s/-p/--name`, `rlp search --dashboard`, `rlp jobs list --json`,
`rlp league show --json`."""

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from rl_platform.cli import app
from rl_platform.commands import jobs as jobs_cli
from rl_platform.commands.league import league_app
from rl_platform.league.league import League
from rl_platform.spec import load_spec
from rl_platform.storage.layout import LEAGUE_DIR
from rl_platform.storage.saved_spec import write_saved_spec
from tests.conftest import EXPERIMENTS


class _FakeClient:
    def __init__(self, jobs: list[Any] = ()) -> None:
        self.calls: list[dict[str, Any]] = []
        self.jobs = list(jobs)

    def submit_job(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        return kwargs["submission_id"]

    def list_jobs(self) -> list[Any]:
        return self.jobs


@pytest.fixture
def fake_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _FakeClient:
    from ray.job_submission import JobStatus

    fake = _FakeClient(
        [
            SimpleNamespace(
                submission_id=f"rlp_{n}",
                job_id=None,
                status=JobStatus.SUCCEEDED,
                start_time=start,
                end_time=start + 5000,
                entrypoint=f"rlp train {n}.yaml",
                message="Job finished successfully.",
            )
            for n, start in (("old", 1_000), ("new", 9_000))
        ]
    )
    monkeypatch.setattr(jobs_cli, "make_client", lambda address: fake)
    monkeypatch.chdir(tmp_path)
    Path("a.yaml").write_text("name: a\n")
    return fake


def test_submit_takes_trains_short_flags_and_a_job_name(fake_cluster: _FakeClient) -> None:
    args = ["submit", "a.yaml", "-s", "training.lr=1e-4", "-p", "smoke", "--name", "lr-sweep"]
    result = CliRunner().invoke(app, [*args, "--no-wait"])
    assert result.exit_code == 0, result.output
    [call] = fake_cluster.calls
    assert call["entrypoint"] == "rlp train a.yaml --set training.lr=1e-4 --profile smoke"
    assert re.fullmatch(r"rlp_lr-sweep_[0-9a-f]{8}", call["submission_id"])
    assert call["metadata"]["rlp_name"] == "lr-sweep"
    assert result.stdout.splitlines()[0] == call["submission_id"]


def test_a_job_name_outside_rays_alphabet_is_refused_before_submitting(
    fake_cluster: _FakeClient,
) -> None:
    result = CliRunner().invoke(app, ["submit", "a.yaml", "--name", "../x y", "--no-wait"])
    assert result.exit_code == 2 and "--name '../x y'" in result.output
    assert "Traceback" not in result.output and fake_cluster.calls == []


def test_jobs_list_json_is_one_document_newest_first(fake_cluster: _FakeClient) -> None:
    result = CliRunner().invoke(app, ["jobs", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [row["id"] for row in rows] == ["rlp_new", "rlp_old"]
    assert rows[0] == {
        "id": "rlp_new",
        "status": "SUCCEEDED",
        "start_time": 9000,
        "end_time": 14000,
        "entrypoint": "rlp train new.yaml",
        "message": "Job finished successfully.",
    }


def test_search_passes_dashboard_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from rl_platform.search import tuner

    seen: dict[str, Any] = {}

    def fake_run_search(spec: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise KeyboardInterrupt  # stop here: no Tune

    monkeypatch.setattr(tuner, "run_search", fake_run_search)
    spec = str(EXPERIMENTS / "search" / "cartpole_ppo_asha.yaml")
    result = CliRunner().invoke(app, ["search", spec, "--no-live", "--dashboard"])
    assert result.exit_code == 130, result.output
    assert seen["dashboard"] is True


def _league_run(run_dir: Path, *, mix_pfsp: float = 0.0) -> None:
    """A duel_vs_based run folder after one iteration: main beat `based` twice."""
    spec = load_spec(EXPERIMENTS / "duel_vs_based.yaml", overrides=[f"league.mix_pfsp={mix_pfsp}"])
    run_dir.mkdir()
    write_saved_spec(run_dir, spec)
    assert spec.league is not None
    league = League(spec=spec.league, storage=run_dir / LEAGUE_DIR, seed=0)
    for _ in range(2):
        league.record_game(learner_id="main", opponent_id="based", outcome="win")
    league.end_iteration(iteration=1, env_steps=100, get_weights=lambda _: {"w": torch.zeros(1)})


def test_league_show_json_holds_the_leaderboard_and_the_mix(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _league_run(run_dir)
    result = CliRunner().invoke(league_app, ["show", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    view = json.loads(result.stdout)
    assert (view["run"], view["iteration"], view["env_steps"]) == ("run", 1, 100)
    rows = {row["id"]: row for row in view["leaderboard"]}
    assert [row["rank"] for row in view["leaderboard"]] == [1, 2, 3]
    assert rows["based"]["win_rate_vs_main"] == 0.0 and rows["based"]["games_vs_main"] == 2
    assert rows["main"]["win_rate_vs_main"] is None
    assert view["opponent_mix"] == pytest.approx(
        {"based": 0.8, "self_play": 0.15, "constant": 0.05}
    )
    assert view["schedule"] is None
    table = CliRunner().invoke(league_app, ["show", str(run_dir)])
    assert "win rate vs main" in table.stdout and "opponent mix at 100 env steps" in table.stdout


def test_league_show_gives_the_shares_pfsp_hands_out_now(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _league_run(run_dir, mix_pfsp=1.0)
    result = CliRunner().invoke(league_app, ["show", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    # Main always beat `based` (hard PFSP weight 0); `constant` is unplayed (prior 0.5), so
    # the scripted keys' 85% all goes to it; self_play keeps its 15%.
    assert json.loads(result.stdout)["opponent_mix"] == pytest.approx(
        {"based": 0.0, "self_play": 0.15, "constant": 0.85}
    )
