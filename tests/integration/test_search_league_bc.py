"""Searches over league and BC specs: opponent-mix weights and `bc.coef` reach each trial, every
league trial keeps its own pool, results.csv and best.yaml come out as for any other spec.

Tiny budgets (two trials of two iterations each, on the local env runner) keep each search
within about a minute on two cores. The trials run one at a time: the second reuses the first's
process (`reuse_actors`) instead of starting and importing torch and RLlib in a second one
beside it, a third of each search's time on two cores; a reused process must then also keep
the trials' leagues apart.
"""

from pathlib import Path

import pytest

from rl_platform import load_spec
from rl_platform.search.folder import trial_results
from rl_platform.search.results import FINISHED, read_results_csv
from rl_platform.search.tuner import run_search
from rl_platform.storage.checkpoints import load_checkpoint
from tests.conftest import EXPERIMENTS

TINY = [
    "training.train_batch_size=300",
    "training.minibatch_size=150",
    "training.num_epochs=1",
    "model.hidden=[16]",
    "env.envs_per_runner=2",
    "stop.env_steps=600",
    "checkpoint.every_iterations=1",
    "search.num_samples=2",
    "search.max_concurrent=1",
    "search.scheduler.type=fifo",
    "logging.tensorboard=false",
]
HEALTHY = {"completed", "early_stopped"}


def _last_result(trial_dir: Path) -> dict:
    return trial_results(trial_dir)[-1]


def _search(spec_file: str, tmp_path: Path, *extra: str):
    spec = load_spec(EXPERIMENTS / "search" / spec_file, overrides=[*TINY, *extra])
    outcome = run_search(spec, out_dir=tmp_path)
    rows = read_results_csv(outcome.search_dir / "results.csv")
    assert len(rows) == 2 and {row["status"] for row in rows} <= HEALTHY, rows
    assert not outcome.interrupted and outcome.best is not None
    return spec, outcome.search_dir, rows


def _best(search_dir: Path, rows: list[dict]) -> tuple[object, dict]:
    """best.yaml as a validated spec, and its results.csv row."""
    best = load_spec(search_dir / "best.yaml")
    best_id = (search_dir / "best.yaml").read_text().splitlines()[0].split()[3].rstrip(":")
    return best, next(row for row in rows if row["trial_id"] == best_id)


@pytest.fixture(scope="module")
def league_search(ray_local, tmp_path_factory):
    return _search(
        "duel_league_mix.yaml",
        tmp_path_factory.mktemp("league_search"),
        "env.kwargs={max_steps: 50}",
        "league.snapshot_every=1",
    )


def test_league_trials_get_the_sampled_mix_and_their_own_pool(league_search):
    spec, search_dir, rows = league_search
    pools = set()
    for row in rows:
        trial_dir = search_dir / f"trial_{row['trial_id']}"
        pool = trial_dir / "league"
        assert (pool / "league.json").is_file(), f"{trial_dir} has no league of its own"
        pools.add(pool.resolve())
        assert 0.2 <= float(row["league.opponent_mix.self_play"]) <= 0.8
        assert 0.1 <= float(row["league.opponent_mix.based"]) <= 0.6
        last = _last_result(trial_dir)
        assert last["league/size"] >= 3  # main + scripted based + constant (+ snapshots)
        assert row[spec.search.scheduler.metric] != ""  # win rate against `based` was measured
        # the league's state is part of the trial's checkpoint, as in `rlp train`
        checkpoints = sorted(trial_dir.glob("checkpoint_*"))
        assert checkpoints and "league" in load_checkpoint(checkpoints[-1]).parts
    assert len(pools) == 2
    assert not (search_dir / "league").exists()  # nothing shared at the search level


def test_league_best_yaml_is_a_valid_league_spec_with_the_best_mix(league_search):
    _, search_dir, rows = league_search
    best, row = _best(search_dir, rows)
    assert best.search is None and best.league is not None
    mix = best.league.opponent_mix
    assert mix["self_play"] == pytest.approx(float(row["league.opponent_mix.self_play"]))
    assert mix["based"] == pytest.approx(float(row["league.opponent_mix.based"]))
    assert mix["constant"] == 0.1  # the weight that was not searched stays as written
    assert best.league.matchmaking == row["league.matchmaking"]


@pytest.fixture(scope="module")
def bc_search(ray_local, tmp_path_factory):
    return _search("cartpole_bc_ppo_coef.yaml", tmp_path_factory.mktemp("bc_search"))


def test_bc_trials_train_with_their_sampled_coefficient(bc_search):
    _, search_dir, rows = bc_search
    coefs = set()
    for row in rows:
        last = _last_result(search_dir / f"trial_{row['trial_id']}")
        coef = float(row["bc.coef"])
        assert 0.03 <= coef <= 3.0
        # the learner's BC weight is the sampled one, not the spec's 1.0
        assert last["bc/coef"] == pytest.approx(coef)
        assert last["loss/bc"] >= 0 and "bc/accuracy" in last
        assert float(row["bc/student_return_mean"]) > 0
        coefs.add(coef)
    assert len(coefs) == 2


def test_bc_best_yaml_is_a_valid_bc_spec_with_the_best_coefficient(bc_search):
    _, search_dir, rows = bc_search
    best, row = _best(search_dir, rows)
    assert best.search is None and best.bc is not None
    assert best.bc.coef == pytest.approx(float(row["bc.coef"]))
    assert best.training.lr == pytest.approx(float(row["training.lr"]))
    assert best.bc.teacher == "scripted://cartpole/balance"
    assert row["status"] in FINISHED
