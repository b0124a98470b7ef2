"""League end to end (no Ray): games, snapshots, slots, exact resume and state mismatches."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from rl_platform.base.errors import UserError
from rl_platform.league.league import League
from rl_platform.league.pool import MANIFEST, LeaguePool
from rl_platform.league.state import LeagueMismatchError
from rl_platform.spec.league import LeagueSpec
from tests.league_support import sample_league_opponent

SPEC = LeagueSpec(
    opponent_mix={"self_play": 0.8, "based": 0.15, "constant": 0.05},
    matchmaking="pfsp",
    snapshot_every=2,
    win_rate_window=20,
    slots=2,
    scripted=["based", "constant"],
    roles={"main_exploiters": 1, "league_exploiters": 1},
)


class FakeLearners:
    """Live weights that change every iteration, as training would."""

    def __init__(self) -> None:
        ids = ["main", "main_exploiter_0", "league_exploiter_0"]
        self.weights = {learner_id: {"w": torch.zeros(3)} for learner_id in ids}
        self.calls: list[str] = []

    def __call__(self, learner_id: str) -> dict[str, torch.Tensor]:
        self.calls.append(learner_id)
        return self.weights[learner_id]  # the live tensors: the league must copy them

    def train(self) -> None:
        with torch.no_grad():
            for tensors in self.weights.values():
                tensors["w"].add_(1.0)


def _play(league: League, rng: np.random.Generator, games: int) -> None:
    for _ in range(games):
        learner = league.learner_ids[int(rng.integers(len(league.learner_ids)))]
        opponent = sample_league_opponent(league, learner).member_id
        outcome = ["win", "draw", "loss"][int(rng.integers(3))]
        league.record_game(learner_id=learner, opponent_id=opponent, outcome=outcome)


def _run(league: League, iterations: range, learners: FakeLearners, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for iteration in iterations:
        _play(league, rng, 30)
        learners.train()
        league.end_iteration(iteration=iteration, env_steps=iteration * 100, get_weights=learners)


def test_fresh_league_registers_spec_members(tmp_path: Path) -> None:
    league = League(spec=SPEC, storage=tmp_path, seed=0)
    assert league.learner_ids == ["main", "main_exploiter_0", "league_exploiter_0"]
    assert [m.id for m in league.members if m.kind == "scripted"] == ["based", "constant"]
    assert (tmp_path / MANIFEST).is_file()
    plan = league.plan_slots()
    assert plan.distribution("main") == pytest.approx(
        {"main": 0.8, "based": 0.15, "constant": 0.05}
    )
    assert plan.distribution("main_exploiter_0") == {"main": 1.0}
    assert plan.module_for("constant") == "scripted_constant"


def test_games_update_stats_ratings_and_windows(tmp_path: Path) -> None:
    league = League(spec=SPEC, storage=tmp_path, seed=0)
    league.record_game(learner_id="main", opponent_id="based", outcome="win")
    main, based = league.member("main"), league.member("based")
    assert (main.games, main.wins, based.losses) == (1, 1, 1)
    assert main.mu > 25.0 > based.mu
    assert league.results.learner_window("main") == (1.0, 1)
    league.record_game(learner_id="main", opponent_id="main", outcome="win")  # mirror
    assert league.member("main").mu == main.mu
    league.record_game(learner_id="main", opponent_id="evicted_v9", outcome="loss")
    assert league.member("main").games == 1
    with pytest.raises(UserError, match="win/draw/loss"):
        league.record_game(learner_id="main", opponent_id="based", outcome="victory")
    with pytest.raises(UserError, match="not a learner"):
        league.record_game(learner_id="based", opponent_id="main", outcome="win")


def test_periodic_snapshots_are_frozen_copies_loaded_into_slots(tmp_path: Path) -> None:
    league = League(spec=SPEC, storage=tmp_path, seed=0)
    learners = FakeLearners()
    _run(league, range(1, 5), learners)
    snapshot_ids = [m.id for m in league.members if m.kind == "snapshot"]
    assert snapshot_ids == [
        "main_v1", "main_exploiter_0_v1", "league_exploiter_0_v1",
        "main_v2", "main_exploiter_0_v2", "league_exploiter_0_v2",
    ]  # fmt: skip
    assert learners.calls.count("main") == 2  # weights fetched only when a snapshot is due
    assert torch.equal(league.load_weights("main_v1")["w"], torch.full((3,), 2.0))
    assert torch.equal(league.load_weights("main_v2")["w"], torch.full((3,), 4.0))
    assert league.member("main_v2").created_at_step == 400
    assert len([s for s in league.slots if s is not None]) <= SPEC.slots
    for choice in league.plan.opponents["main"]:
        if choice.member_id.endswith(("_v1", "_v2")):
            assert league.slots[int(choice.module_id.removeprefix("opponent_"))] == choice.member_id


def test_win_rate_snapshot_fires_on_a_full_window_then_resets(tmp_path: Path) -> None:
    spec = LeagueSpec(snapshot_win_rate=0.75, win_rate_window=4, slots=1, scripted=["based"])
    league = League(spec=spec, storage=tmp_path)
    learners = FakeLearners()
    for outcome in ["win", "win", "draw"]:
        league.record_game(learner_id="main", opponent_id="based", outcome=outcome)
    assert league.end_iteration(iteration=1, env_steps=10, get_weights=learners).snapshots == []
    league.record_game(learner_id="main", opponent_id="based", outcome="win")
    report = league.end_iteration(iteration=2, env_steps=20, get_weights=learners)
    assert [m.id for m in report.snapshots] == ["main_v1"]
    assert league.results.learner_window("main") == (None, 0)


def test_eviction_forgets_results_and_keeps_counter(tmp_path: Path) -> None:
    spec = LeagueSpec(snapshot_every=1, max_snapshots=1, slots=1)
    league = League(spec=spec, storage=tmp_path)
    learners = FakeLearners()
    league.end_iteration(iteration=1, env_steps=1, get_weights=learners)
    league.record_game(learner_id="main", opponent_id="main_v1", outcome="win")
    report = league.end_iteration(iteration=2, env_steps=2, get_weights=learners)
    assert report.evicted == ["main_v1"] and [m.id for m in report.snapshots] == ["main_v2"]
    assert league.results.win_prob("main", "main_v1") is None
    assert report.plan.distribution("main") == {"main_v2": 1.0}
    assert LeaguePool.open(tmp_path)[0].ids == ["main", "main_v2"]


def test_exact_resume_from_the_storage_root(tmp_path: Path) -> None:
    league = League(spec=SPEC, storage=tmp_path, seed=7)
    _run(league, range(1, 4), FakeLearners())
    _play(league, np.random.default_rng(1), 10)  # games after the last iteration
    league.save()

    resumed = League(spec=SPEC, storage=tmp_path, seed=12345)  # the saved RNG wins
    assert resumed.slots == league.slots and resumed.plan == league.plan
    assert resumed.members == league.members
    for learner in league.learner_ids:
        expected = [sample_league_opponent(league, learner) for _ in range(40)]
        assert [sample_league_opponent(resumed, learner) for _ in range(40)] == expected
    assert resumed.plan_slots() == league.plan_slots()
    assert resumed.leaderboard() == league.leaderboard()


def test_state_dict_restores_exactly_after_more_play(tmp_path: Path) -> None:
    league = League(spec=SPEC, storage=tmp_path, seed=3)
    _run(league, range(1, 3), FakeLearners())
    state = json.loads(json.dumps(league.state_dict()))  # must survive JSON
    expected_samples = [sample_league_opponent(league, "main") for _ in range(30)]
    expected_plan = league.plan_slots()

    _play(league, np.random.default_rng(9), 25)  # diverge
    league.load_state_dict(state)
    assert [sample_league_opponent(league, "main") for _ in range(30)] == expected_samples
    assert league.plan_slots() == expected_plan


def test_restoring_into_a_different_member_set_lists_missing_and_extra(tmp_path: Path) -> None:
    spec = LeagueSpec(snapshot_every=1, slots=2, scripted=["based"])
    source = League(spec=spec, storage=tmp_path / "a")
    _run(source, range(1, 3), FakeLearners())  # main_v1, main_v2
    other = League(spec=spec, storage=tmp_path / "b")
    _run(other, range(1, 2), FakeLearners())  # main_v1 only
    other.add_checkpoint(member_id="ckpt", weights={"w": torch.ones(1)})
    with pytest.raises(LeagueMismatchError) as caught:
        other.load_state_dict(source.state_dict())
    assert caught.value.missing == ["main_v2"] and caught.value.extra == ["ckpt"]
    assert "main_v2" in str(caught.value) and "ckpt" in str(caught.value)
    assert isinstance(caught.value, UserError)


def test_failed_snapshot_write_registers_nothing(tmp_path: Path, monkeypatch) -> None:
    spec = LeagueSpec(snapshot_every=1, slots=1)
    league = League(spec=spec, storage=tmp_path)
    manifest_before = (tmp_path / MANIFEST).read_bytes()

    def _disk_full(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("rl_platform.storage.folder_storage.write_bytes_atomic", _disk_full)
    with pytest.raises(OSError):
        league.end_iteration(iteration=1, env_steps=5, get_weights=FakeLearners())
    assert [m.id for m in league.members] == ["main"]
    assert (tmp_path / MANIFEST).read_bytes() == manifest_before
    monkeypatch.undo()
    report = league.end_iteration(iteration=1, env_steps=5, get_weights=FakeLearners())
    assert [m.id for m in report.snapshots] == ["main_v1"]  # numbering did not skip


def test_unknown_mix_key_is_reported_at_construction(tmp_path: Path) -> None:
    spec = LeagueSpec(opponent_mix={"self_play": 1.0, "rando": 1.0}, scripted=["based"])
    with pytest.raises(UserError, match=r"\['rando'\]"):
        League(spec=spec, storage=tmp_path)
