"""Opponent-mix schedules by env step, env-step snapshot and checkpoint cadences (no Ray)."""

from pathlib import Path

import pytest
import torch
from pydantic import ValidationError

from rl_platform.league.league import League
from rl_platform.run.stopping import StopTracker
from rl_platform.spec.league import LeagueSpec
from rl_platform.spec.sections import CheckpointSpec, StopSpec

EASY_TO_REFERENCE = [
    {"from_env_steps": 0, "mix": {"based": 0.8, "self_play": 0.2}},
    {"from_env_steps": 1000, "mix": {"self_play": 0.8, "based": 0.15, "constant": 0.05}},
]


def _spec(**extra) -> LeagueSpec:
    return LeagueSpec(
        opponent_mix=EASY_TO_REFERENCE, scripted=["based", "constant"], slots=2, **extra
    )


def test_step_holds_each_phase_and_linear_blends_neighbours():
    step = _spec()
    assert step.mix_at(0) == pytest.approx({"based": 0.8, "self_play": 0.2})
    assert step.mix_at(999) == pytest.approx({"based": 0.8, "self_play": 0.2})
    assert step.mix_at(1000)["self_play"] == pytest.approx(0.8)
    assert step.mix_keys == ["based", "self_play", "constant"]

    linear = _spec(mix_interpolation="linear")
    halfway = linear.mix_at(500)
    assert halfway == pytest.approx({"based": 0.475, "self_play": 0.5, "constant": 0.025})
    assert sum(halfway.values()) == pytest.approx(1.0)
    assert linear.mix_at(10**9)["constant"] == pytest.approx(0.05)  # the last phase holds
    assert LeagueSpec(opponent_mix={"based": 2.0, "self_play": 2.0}).mix_at(123) == {
        "based": 0.5,
        "self_play": 0.5,
    }


@pytest.mark.parametrize(
    ("phases", "fragment"),
    [
        ([], "empty"),
        ([{"from_env_steps": 5, "mix": {"based": 1}}], "from_env_steps: 0"),
        (
            [{"from_env_steps": 0, "mix": {"based": 1}}, {"from_env_steps": 0, "mix": {"a": 1}}],
            "increasing",
        ),
        ([{"from_env_steps": 0, "mix": {"based": -1}}], "phase 0"),
        ([{"from_env_steps": 0, "mix": {"based": 1}, "until": 3}], "until"),
    ],
)
def test_bad_schedules_are_refused(phases, fragment):
    with pytest.raises(ValidationError, match=fragment):
        LeagueSpec(opponent_mix=phases, scripted=["based"])


def test_the_league_switches_phase_by_env_steps_and_resumes_with_the_same_mix(tmp_path: Path):
    league = League(spec=_spec(), storage=tmp_path, seed=0)
    weights = {"w": torch.zeros(2)}
    assert league.opponent_distribution("main").get("based") == pytest.approx(0.8)
    league.end_iteration(iteration=1, env_steps=600, get_weights=lambda _: weights)
    assert league.opponent_distribution("main").get("based") == pytest.approx(0.8)
    league.end_iteration(iteration=2, env_steps=1200, get_weights=lambda _: weights)
    after = league.opponent_distribution("main")
    assert after["based"] == pytest.approx(0.15) and after["constant"] == pytest.approx(0.05)
    assert "based" not in league.matchmaker.self_play(
        league.member("main"), members=league.members, win_prob=lambda _: None
    )

    resumed = League(spec=_spec(), storage=tmp_path, seed=99)
    assert resumed.env_steps == 1200
    assert resumed.opponent_distribution("main") == pytest.approx(after)


def test_snapshots_every_n_env_steps(tmp_path: Path):
    league = League(spec=_spec(snapshot_every_env_steps=1000), storage=tmp_path, seed=0)
    snapshots = []
    for iteration, env_steps in enumerate((400, 800, 1200, 1600, 2000, 2400), start=1):
        report = league.end_iteration(
            iteration=iteration, env_steps=env_steps, get_weights=lambda _: {"w": torch.ones(2)}
        )
        snapshots += [(env_steps, m.id) for m in report.snapshots]
    assert snapshots == [(1200, "main_v1"), (2400, "main_v2")]


def test_checkpoints_every_n_env_steps_counting_from_the_resumed_step():
    tracker = StopTracker(
        StopSpec(iterations=100),
        CheckpointSpec(every_iterations=None, every_env_steps=1000),
        env_steps=5000,
    )
    due = []
    for iteration, env_steps in enumerate(range(5400, 9000, 400), start=1):
        if tracker.checkpoint_due(iteration, env_steps):
            tracker.mark_checkpoint(iteration, env_steps)
            due.append(env_steps)
    assert due == [6200, 7400, 8600]
