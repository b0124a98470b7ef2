"""The off-policy array path resumes exactly: a SAC run stopped after 2 iterations and
resumed to 4 writes the metrics rows of an uninterrupted 4-iteration run (losses, alpha,
returns: every update and every action the same), because the checkpoint holds the replay
store, the update step's and the acting loop's RNGs and the envs' (Pendulum's 200-step
episodes end on the iteration boundary, 100 env steps each). With `checkpoint.replay: false`
the store is not saved, and the resume says so."""

from pathlib import Path

from loguru import logger

from rl_platform import load_spec, train
from rl_platform.rllib.off_policy import DRIVER_PART, REPLAY_PART
from rl_platform.storage.checkpoints import CheckpointStore, load_checkpoint
from rl_platform.storage.metrics_rows import read_metrics
from tests.conftest import EXPERIMENTS

SMALL = [
    "logging.wandb=off",
    "logging.tensorboard=false",
    "model.hidden=[16,16]",
    "training.train_batch_size=32",
    "training.num_steps_sampled_before_learning_starts=100",
    "checkpoint.every_iterations=1",
]


def _spec(iterations: int, *extra: str):
    overrides = [*SMALL, f"stop.iterations={iterations}", *extra]
    return load_spec(EXPERIMENTS / "pendulum_sac.yaml", profile="smoke", overrides=overrides)


def _rows(run_dir: Path) -> list[dict]:
    return [
        {k: v for k, v in row.items() if not k.startswith("perf/")} for row in read_metrics(run_dir)
    ]


def test_a_resumed_run_writes_the_uninterrupted_runs_rows(ray_local, tmp_path):
    whole = train(_spec(4), out_dir=tmp_path / "whole").run_dir
    cut = train(_spec(2), out_dir=tmp_path / "cut").run_dir
    parts = load_checkpoint(CheckpointStore(cut / "checkpoints").latest()).parts
    assert parts[REPLAY_PART]["filled"] == 200 and DRIVER_PART in parts
    assert train(_spec(4), resume=cut).iterations == 4
    expected, resumed = _rows(whole), _rows(cut)
    assert [row["env_steps"] for row in resumed] == [100, 200, 300, 400]
    assert "train/episode_return_mean" in resumed[-1] and "train/qf_loss" in resumed[-1]
    assert resumed == expected


def test_without_the_replay_the_resume_says_so(ray_local, tmp_path):
    run_dir = train(_spec(1, "checkpoint.replay=false"), out_dir=tmp_path).run_dir
    parts = load_checkpoint(CheckpointStore(run_dir / "checkpoints").latest()).parts
    assert REPLAY_PART not in parts
    lines: list[str] = []
    sink = logger.add(lines.append, level="WARNING", format="{message}")
    try:
        train(_spec(2, "checkpoint.replay=false"), resume=run_dir)
    finally:
        logger.remove(sink)
    assert any("checkpoint.replay: false" in line for line in lines), lines
