"""benchmarks/learning_rows.py's arithmetic on synthetic run folders (no training): returns
at fixed env steps, IQM and interval over seeds, the report files, and `rlp plot
--reference`'s points."""

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import learning_rows
from benchmarks.common.learning_curves import iqm_curve, read_seed_runs, row_at, throughput
from benchmarks.learning_rows import META, RUNS, parse_args, parse_steps, plan, report
from rl_platform.base.errors import UserError
from rl_platform.evaluation.plot import plot_runs
from rl_platform.evaluation.reference_points import parse_reference, reference_points
from tests.conftest import REPO_ROOT

REFERENCES = REPO_ROOT / "benchmarks" / "reference_curves.json"


def _seed(folder: Path, name: str, returns: list[float], *, steps_per_s: float) -> None:
    run = folder / name
    run.mkdir(parents=True)
    rows = [
        {"iteration": i + 1, "env_steps": 1000.0 * (i + 1), "train/episode_return_mean": r}
        for i, r in enumerate(returns)
    ]
    (run / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (run / "spec.yaml").write_text("name: hopper_row\n")
    summary = {"env_steps_per_s": steps_per_s, "wall_s": len(returns) * 1000 / steps_per_s}
    (run / "trial_metrics.json").write_text(json.dumps(summary))


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    folder = tmp_path / RUNS / "seeds" / "hopper_row" / "20261128-120000"
    _seed(folder, "seed_0", [10.0, 20.0, 30.0, 40.0], steps_per_s=500.0)
    _seed(folder, "seed_1", [0.0, 10.0, 20.0, 60.0], steps_per_s=600.0)
    _seed(folder, "seed_2", [5.0, 15.0, 50.0], steps_per_s=700.0)  # stopped at 3,000
    return tmp_path


def test_return_at_fixed_steps_over_the_seeds_that_got_there(seeds):
    runs = read_seed_runs(seeds / RUNS)
    assert [run.name for run in runs] == ["seed_0", "seed_1", "seed_2"]
    at_2500 = row_at(runs, 2500)  # halfway between the 2,000 and 3,000 rows
    assert at_2500["values"] == [25.0, 15.0, 32.5]
    assert at_2500["n"] == 3 and at_2500["iqm"] == pytest.approx(np.mean([25.0, 15.0, 32.5]))
    low, high = at_2500["ci95"]
    assert 15.0 <= low <= at_2500["mean"] <= high <= 32.5
    at_4000 = row_at(runs, 4000)  # seed_2 never reached it
    assert at_4000["values"] == [40.0, 60.0] and at_4000["n"] == 2
    assert row_at(runs, 9000) == {"env_steps": 9000, "n": 0}


def test_iqm_curve_and_throughput(seeds):
    runs = read_seed_runs(seeds / RUNS)
    grid, iqm = iqm_curve(runs)
    assert grid[0] == 1000.0 and grid[-1] == 3000.0  # the range every seed covers
    assert iqm[0] == pytest.approx(5.0) and iqm[-1] == pytest.approx(np.mean([30, 20, 50]))
    # walls: 4,000 / 500, 4,000 / 600 and 3,000 / 700 s: the median is the middle one
    assert throughput(runs) == {"env_steps_per_s": 600.0, "wall_s_per_seed": 4000 / 600}


_META = {
    "spec": "experiments/mujoco_ppo.yaml", "name": "hopper_row", "seeds": 3,
    "steps": [2000, 4000], "reference": "Hopper-v5/PPO", "wall_s": 30.0,
    "command": ["rlp", "train", "experiments/mujoco_ppo.yaml", "--seeds", "3"],
    "machine_start": {"cpu_model": "cpu", "cores": 2, "load_1_5_15": [1.0, 1.0, 1.0]},
    "machine_end": {"cpu_model": "cpu", "cores": 2, "load_1_5_15": [2.0, 1.0, 1.0]},
}  # fmt: skip


def test_report_writes_the_row_from_an_existing_folder(seeds):
    (seeds / META).write_text(json.dumps(_META))
    row = report(seeds)
    assert [entry["n"] for entry in row["at_steps"]] == [3, 2]
    assert row["at_steps"][0]["values"] == [20.0, 10.0, 15.0]
    assert row["reference_points"] and row["env_steps_per_s"] == 600.0
    written = json.loads((seeds / "row.json").read_text())
    assert written["at_steps"] == row["at_steps"]
    table = (seeds / "row.md").read_text()
    assert "| 2,000 | 15 | [" in table and "load [1.0, 1.0, 1.0] at the start" in table
    assert (seeds / "row.png").stat().st_size > 0
    assert row["final_eval"] is None and "final checkpoint" not in table  # not asked for


def test_the_final_checkpoints_are_played_where_they_exist(seeds, monkeypatch):
    played = {"seed_0": 2500.0, "seed_2": 2300.0}  # seed_1 has no checkpoint: rlp eval fails
    monkeypatch.setattr(learning_rows, "final_return", lambda run, n: played.get(run.name))
    (seeds / META).write_text(json.dumps(_META))
    row = report(seeds, eval_episodes=20)
    final = row["final_eval"]
    assert final["episodes"] == 20 and final["n"] == 2 and final["values"] == [2500.0, 2300.0]
    assert final["per_seed"] == {"seed_0": 2500.0, "seed_1": None, "seed_2": 2300.0}
    table = (seeds / "row.md").read_text()
    assert "| final checkpoint, `rlp eval` of 20 sampled episodes | 2,400 | [" in table
    assert "| 2 | 2,500, -, 2,300 |" in table


def test_arguments_and_default_steps():
    assert parse_steps("500000, 1e6,250000", budget=None) == [250000, 500000, 1000000]
    assert parse_steps(None, budget=1_000_000) == [250000, 500000, 750000, 1000000]
    args = parse_args(["experiments/mujoco_ppo.yaml", "--set", "vars.env=HalfCheetah-v5"])
    assert args.seeds == 3 and args.set == ["vars.env=HalfCheetah-v5"]
    with pytest.raises(SystemExit):
        parse_args([])  # neither a spec nor --report
    with pytest.raises(SystemExit):
        parse_args(["spec.yaml", "--report", "out"])


def test_one_seed_is_one_plain_run_and_more_are_rlp_train_seeds(tmp_path):
    """`rlp train --seeds` takes 2 or more: one seed trains the spec's own seed."""
    spec = str(REPO_ROOT / "experiments" / "mujoco_hopper_sac.yaml")
    one = plan(parse_args([spec, "--seeds", "1", "--out", str(tmp_path)]))["command"]
    three = plan(parse_args([spec, "--seeds", "3", "--out", str(tmp_path)]))["command"]
    assert "--seeds" not in one and one[-2:] == ["--out", str(tmp_path / RUNS)]
    assert three[3:5] == ["--seeds", "3"]


def test_a_failed_training_without_runs_ends_with_one_line(tmp_path):
    (tmp_path / META).write_text(json.dumps({"steps": []}))
    with pytest.raises(SystemExit, match="no seed run"):
        report(tmp_path)


def test_reference_points_parse_and_draw(seeds, tmp_path):
    path, key = parse_reference(f"{REFERENCES}:ALE/Pong-v5/PPO")
    assert path == REFERENCES and key == "ALE/Pong-v5/PPO"
    (pong,) = reference_points(path, key)
    assert pong.env_steps == 10_000_000 and pong.note.startswith("checked: 20.36")
    for key in ("Hopper-v5/PPO", "HalfCheetah-v5/PPO", "Hopper-v5/SAC"):
        points = reference_points(REFERENCES, key)
        assert all(p.url.startswith("https://") for p in points)
        # Each point says whether it was read from its source or is from memory.
        assert all(p.note.startswith(("checked:", "approximate")) for p in points), key
    with pytest.raises(UserError, match="no such key"):
        reference_points(REFERENCES, "Walker2d-v5/PPO")
    with pytest.raises(UserError, match=r"FILE\.json:KEY"):
        parse_reference("Hopper-v5/PPO")
    drawn = plot_runs(
        [seeds / RUNS / "seeds" / "hopper_row"],  # `rlp plot` looks 2 levels down
        metric="train/episode_return_mean",
        out=tmp_path / "curves.png",
        reference=(REFERENCES, "Hopper-v5/PPO"),
    )
    assert drawn["reference_points"] == 2 and drawn["groups"] == {"hopper_row": 3}


def test_meta_is_written_before_training_so_a_stopped_row_can_be_reported(tmp_path, monkeypatch):
    """A row stopped mid-training is finished seed by seed and read with --report."""
    spec = str(REPO_ROOT / "experiments" / "mujoco_hopper_sac.yaml")
    meta = plan(parse_args([spec, "--seeds", "3", "--out", str(tmp_path)]))
    seen_during_training = {}

    def training(command, **kwargs):
        seen_during_training.update(json.loads((tmp_path / META).read_text()))
        raise KeyboardInterrupt  # the session ends while the seeds train

    monkeypatch.setattr(learning_rows.subprocess, "run", training)
    with pytest.raises(KeyboardInterrupt):
        learning_rows.run(meta)
    assert seen_during_training["exit_code"] is None
    assert (
        seen_during_training["steps"] == meta["steps"] and "machine_start" in seen_during_training
    )
