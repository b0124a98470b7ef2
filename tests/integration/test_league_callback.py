"""Duel self-play league through RLlib: slots, snapshots, ratings, frozen weights, resume.

Tiny batches and 50-frame games keep each iteration to a few seconds on a small CPU machine.
"""

import copy
import functools
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from rl_platform import load_spec, train
from rl_platform.base.errors import UserError
from rl_platform.commands.league import league_app
from rl_platform.league import LeaguePool, routing
from rl_platform.league.members import DEFAULT_MU
from rl_platform.rllib.algorithm_state import restore_algorithm, snapshot_algorithm
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.league_callback import LeagueCallback, driver_league, league_extension
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.storage.metrics_rows import read_metrics
from tests.conftest import EXPERIMENTS
from tests.league_support import clear_runner_plan

TINY = [
    "training.train_batch_size=300",
    "training.minibatch_size=150",
    "training.num_epochs=1",
    "model.hidden=[16]",
    "env.envs_per_runner=2",
    "env.kwargs={max_steps: 50}",
    "league.snapshot_every=1",
    "league.slots=2",
    "league.opponent_mix={self_play: 0.5, constant: 0.25, based: 0.25}",
    "logging.wandb=off",
    "logging.tensorboard=false",
]
SLOTS = ("opponent_0", "opponent_1")
MODULES = {"main", *SLOTS, "scripted_based", "scripted_constant"}


def _spec(*extra: str):
    return load_spec(EXPERIMENTS / "duel_vs_based.yaml", overrides=[*TINY, *extra])


def _build(run_dir):
    config = build_algorithm_config(
        _spec(), extensions=[functools.partial(league_extension, run_dir=run_dir)]
    )
    return config.build_algo()


def _callback(algo) -> LeagueCallback:
    callbacks = algo.callbacks if isinstance(algo.callbacks, list) else [algo.callbacks]
    return next(cb for cb in callbacks if isinstance(cb, LeagueCallback))


def _assert_same(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for name in a:
        np.testing.assert_array_equal(np.asarray(a[name]), np.asarray(b[name]), err_msg=name)


def _assert_slots_hold_their_members(algo, league) -> None:
    learner = algo.learner_group.get_weights(module_ids=list(SLOTS))
    for k, member_id in enumerate(league.slots):
        if member_id is None:
            continue
        stored = {n: t.numpy() for n, t in league.load_weights(member_id).items()}
        _assert_same(learner[SLOTS[k]], stored)
        # The sampling copy (inference-only: no value branch) must match the learner's.
        runner = algo.env_runner.module[SLOTS[k]].get_state()
        _assert_same(runner, {n: stored[n] for n in runner})


def test_slots_are_frozen_main_trains_and_module_count_stays_constant(ray_local, tmp_path):
    algo = _build(tmp_path)
    try:
        league = _callback(algo).league
        assert driver_league(algo) is league  # the public way in (benchmarks/league_scaling.py)
        sizes = []
        for _ in range(4):
            before = algo.learner_group.get_weights()
            result = algo.train()
            after = algo.learner_group.get_weights()
            assert set(after) == MODULES  # K slots, however many snapshots exist
            assert any(
                not np.array_equal(before["main"][n], after["main"][n]) for n in after["main"]
            )
            reloaded = {SLOTS[k] for k in league.plan.reload}
            for slot in set(SLOTS) - reloaded:
                _assert_same(before[slot], after[slot])  # never trained
            _assert_slots_hold_their_members(algo, league)
            sizes.append(len(league.pool))
            metrics = result["env_runners"]
            assert metrics["league/size"] == sizes[-1]
            assert {"league/rating/main", "league/games_dropped"} <= set(metrics)
            assert "league_games" not in metrics  # consumed by the driver
    finally:
        algo.stop()
    assert sizes == [3 + i for i in range(1, 5)]  # main + 2 scripted + one snapshot per iteration
    manifest = json.loads((tmp_path / "league" / "league.json").read_text())
    members = {m["id"]: m for m in manifest["members"]}
    assert {f"main_v{i}" for i in range(1, 5)} <= set(members)
    assert all((tmp_path / "league" / "weights" / f"main_v{i}.safetensors").is_file()
               for i in range(1, 5))  # fmt: skip
    assert members["main"]["games"] > 0 and members["main"]["mu"] != DEFAULT_MU
    assert members["constant"]["games"] + members["based"]["games"] > 0
    assert manifest["state"]["iteration"] == 4


def test_restore_parts_rolls_the_league_back_to_the_checkpoint_exactly(ray_local, tmp_path):
    first = _build(tmp_path)
    try:
        for _ in range(2):
            first.train()
        parts = snapshot_algorithm(first) | _callback(first).checkpoint_parts()
        saved = copy.deepcopy(parts["league"])
        path = CheckpointStore(tmp_path / "checkpoints").save(iteration=2, parts=parts, meta={})
        first.train()  # league.json moves on: main_v3 exists on disk now
    finally:
        first.stop()
    assert (tmp_path / "league" / "weights" / "main_v3.safetensors").is_file()

    second = _build(tmp_path)  # reopens league.json at iteration 3
    try:
        callback = _callback(second)
        assert "main_v3" in callback.league.pool
        checkpoint = load_checkpoint(path)
        restore_algorithm(second, checkpoint)
        callback.restore_parts(checkpoint.parts, algorithm=second)
        assert callback.league.state_dict() == saved  # members, ratings, RNG, slots, windows
        on_disk, state = LeaguePool.open(tmp_path / "league")
        assert on_disk.ids == [m["id"] for m in saved["members"]]
        assert state == saved["league"]
        assert not (tmp_path / "league" / "weights" / "main_v3.safetensors").exists()
        _assert_slots_hold_their_members(second, callback.league)
        second.train()
        assert "main_v3" in callback.league.pool  # numbering continues from the checkpoint
        assert callback.league.iteration == 3
    finally:
        second.stop()


def test_train_loop_checkpoints_and_resumes_the_league(ray_local, tmp_path):
    spec = _spec("stop.iterations=2", "checkpoint.every_iterations=1")
    first = train(spec, out_dir=tmp_path)
    checkpoint = load_checkpoint(first.last_checkpoint)
    league_dir = first.run_dir / "league"
    assert checkpoint.parts["league"]["league"]["iteration"] == 2
    assert json.loads((league_dir / "league.json").read_text())["state"]["iteration"] == 2
    lines = read_metrics(first.run_dir)
    assert all("league/rating/main" in m and "league/size" in m for m in lines)
    _check_league_cli(first.run_dir)  # adds the frozen member `frozen_it2`

    resumed = train(_spec("stop.iterations=3"), resume=first.run_dir)
    assert resumed.iterations == 3
    manifest = json.loads((league_dir / "league.json").read_text())
    assert manifest["state"]["iteration"] == 3
    members = {m["id"]: m for m in manifest["members"]}
    assert "main_v3" in members  # snapshot numbering continues from the checkpoint
    assert members["frozen_it2"]["kind"] == "checkpoint"  # added after it: kept on resume


def _check_league_cli(run_dir) -> None:
    runner = CliRunner()
    shown = runner.invoke(league_app, ["show", str(run_dir)])
    assert shown.exit_code == 0, shown.output
    assert "main_v2" in shown.output and "win rate vs main" in shown.output

    before = {m.id: m for m in LeaguePool.open(run_dir / "league")[0].members}
    args = ["tournament", str(run_dir), "--games", "4", "-m", "main_v1", "-m", "constant"]
    played = runner.invoke(league_app, args)
    assert played.exit_code == 0, played.output
    assert (run_dir / "league" / "tournament.png").stat().st_size > 0
    after = {m.id: m for m in LeaguePool.open(run_dir / "league")[0].members}
    for member_id in ("main_v1", "constant"):
        assert after[member_id].games == before[member_id].games + 4
    assert after["main_v1"].mu != before["main_v1"].mu
    assert after["main_v2"] == before["main_v2"]  # not in the tournament

    checkpoint = str(run_dir / "checkpoints" / "iter_000001")
    added = runner.invoke(league_app, ["add", str(run_dir), checkpoint, "--id", "frozen_it2"])
    assert added.exit_code == 0, added.output
    member = LeaguePool.open(run_dir / "league")[0].get("frozen_it2")
    assert member.kind == "checkpoint" and member.weights_sha256
    again = runner.invoke(league_app, ["add", str(run_dir), checkpoint, "--id", "frozen_it2"])
    assert again.exit_code == 2 and "already exists" in again.output


def test_league_needs_a_two_player_env(tmp_path):
    spec = load_spec(
        EXPERIMENTS / "cartpole_ppo.yaml",
        overrides=["league={scripted: [based], opponent_mix: {based: 1.0}}"],
    )
    with pytest.raises(UserError, match="single-agent"):
        build_algorithm_config(
            spec, extensions=[functools.partial(league_extension, run_dir=tmp_path)]
        )


class _Episode:
    """The part of MultiAgentEpisode the mapping function uses."""

    def __init__(self) -> None:
        self.custom_data: dict = {}


def _plan(slot_member: str) -> dict:
    return {
        "slots": [slot_member, None],
        "reload": [0],
        "opponents": {"main": [[slot_member, "opponent_0", 0.5], ["based", "scripted_based", 0.5]]},
    }


def test_mapping_pairs_each_episode_once_with_fair_seats(monkeypatch) -> None:
    clear_runner_plan(monkeypatch)
    routing.install_plan(_plan("main_v1"), version=1, seed=0, worker_index=1)
    rng = np.random.default_rng(0)
    main_seats, opponents = [], []
    for _ in range(400):
        episode = _Episode()
        agents = ["player_0", "player_1"][:: 1 if rng.random() < 0.5 else -1]
        modules = {a: routing.league_mapping_fn(a, episode) for a in agents}
        assert sorted(modules.values()).count("main") == 1
        assert routing.league_mapping_fn(agents[0], episode) == modules[agents[0]]  # stable
        pairing = routing.pairing_of(episode)
        main_seats.append(pairing.learner_agent)
        opponents.append(pairing.module)
        assert modules[pairing.learner_agent] == "main"
    assert 0.4 < main_seats.count("player_0") / 400 < 0.6
    assert 0.4 < opponents.count("opponent_0") / 400 < 0.6
    assert routing.league_mapping_fn("player_0", None) == "main"  # space inference probe


def test_a_pairing_survives_the_copies_rllib_makes(monkeypatch) -> None:
    """RLlib deep-copies custom_data into every chunk and pickles episodes to the driver."""
    import copy
    import pickle

    clear_runner_plan(monkeypatch)
    routing.install_plan(_plan("main_v1"), version=1, seed=0, worker_index=1)
    episode = _Episode()
    routing.league_mapping_fn("player_0", episode)
    routing.league_mapping_fn("player_1", episode)
    pairing = routing.pairing_of(episode)
    assert pairing is not None and pairing.learner == "main"
    assert pairing.learner_agent in ("player_0", "player_1")
    assert copy.deepcopy(pairing) == pickle.loads(pickle.dumps(pairing)) == pairing


def test_games_whose_slot_was_swapped_mid_game_are_stale(monkeypatch) -> None:
    slot_game = routing.Pairing("main", "player_0", "main_v1", "opponent_0", version=1)
    scripted_game = routing.Pairing("main", "player_0", "based", "scripted_based", version=1)
    clear_runner_plan(monkeypatch)
    routing.install_plan(_plan("main_v1"), version=2, seed=0, worker_index=0)
    assert not routing.is_stale(slot_game)  # new plan, same member in the slot
    routing.install_plan(_plan("main_v2"), version=3, seed=0, worker_index=0)
    assert routing.is_stale(slot_game) and not routing.is_stale(scripted_game)
    clear_runner_plan(monkeypatch)
    assert routing.is_stale(scripted_game)  # no plan: nothing can be attributed


def test_outcome_prefers_the_env_verdict_over_returns() -> None:
    outcome = routing.game_outcome
    assert (
        outcome(learner_info={"outcome": "loss"}, learner_return=3.0, opponent_return=-3.0)
        == "loss"
    )
    assert outcome(learner_info={}, learner_return=1.0, opponent_return=-1.0) == "win"
    assert outcome(learner_info=None, learner_return=0.0, opponent_return=0.0) == "draw"
