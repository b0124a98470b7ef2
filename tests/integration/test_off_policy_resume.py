"""The off-policy array path's resume (docs/off_policy.md, "Resuming").

Between episodes, exactly: a SAC run stopped after 2 iterations and resumed to 4 writes the
metrics rows of an uninterrupted 4-iteration run (losses, alpha, returns: every update and
every action the same), because the checkpoint holds the replay store, the update step's and
the acting loop's RNGs and the envs' (Pendulum's 200-step episodes end on the iteration
boundary, 100 env steps each).

Mid-episode (CartPole DQN, 4 envs, 1000 env steps an iteration): the learning state restores
exactly (weights, Adam moments, the step's generator, the replay rows and priorities, the
counters, the RNGs, the episode window); the episodes in flight end at the checkpoint (their
last rows marked truncated) and every env starts a new one, so two resumes from one
checkpoint write the same rows. With `checkpoint.replay: false` the store is not saved, and
the resume says so."""

import shutil
from pathlib import Path
from typing import Any

import numpy as np
from loguru import logger

from rl_platform import load_spec, train
from rl_platform.rllib.algorithm_state import ALGORITHM_PART, snapshot_algorithm
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.rllib.off_policy import DRIVER_PART, REPLAY_PART
from rl_platform.run.loop import checkpoint_participants, resume_from
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


DQN_SMALL = [
    "logging.wandb=off",
    "logging.tensorboard=false",
    "model.hidden=[16,16]",
    "training.num_steps_sampled_before_learning_starts=200",
    "checkpoint.every_iterations=1",
]


def _dqn(iterations: int):
    overrides = [*DQN_SMALL, f"stop.iterations={iterations}"]
    return load_spec(EXPERIMENTS / "cartpole_dqn.yaml", profile="smoke", overrides=overrides)


def _flat(tree: Any, path: str = "") -> dict[str, Any]:
    """Nested state as {path: leaf}, arrays as numpy."""
    if isinstance(tree, dict):
        return {k: v for key, sub in tree.items() for k, v in _flat(sub, f"{path}/{key}").items()}
    return {path: np.asarray(tree)}


def _assert_same(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    assert set(actual) == set(expected), set(actual) ^ set(expected)
    for key, value in expected.items():
        np.testing.assert_array_equal(actual[key], value, err_msg=key)


def test_a_mid_episode_checkpoint_restores_the_learning_state_exactly(ray_local, tmp_path):
    run_dir = train(_dqn(2), out_dir=tmp_path).run_dir
    checkpoint = load_checkpoint(CheckpointStore(run_dir / "checkpoints").latest())
    saved_driver, saved_replay = checkpoint.parts[DRIVER_PART], checkpoint.parts[REPLAY_PART]
    in_flight = list(saved_driver["collector"]["in_flight"])
    assert in_flight, "the checkpoint must be taken mid-episode for this test"
    algo = build_algorithm_config(_dqn(3)).build_algo()
    try:
        resume_from(algo, checkpoint)
        learner = snapshot_algorithm(algo)[ALGORITHM_PART]["learner_group"]["learner"]
        (participant,) = checkpoint_participants(algo)
        restored = participant.checkpoint_parts()
    finally:
        algo.stop()
    saved_learner = checkpoint.parts[ALGORITHM_PART]["learner_group"]["learner"]
    for key in ("rl_module", "optimizer", "rlp_step_generator"):
        _assert_same(_flat(learner[key]), _flat(saved_learner[key]))
    # the replay: the same rows, cursor, priorities and generator, but for the cut
    cut = np.asarray(saved_replay["truncated"]).copy()
    cut[(np.asarray(saved_replay["cursor"]).item() - 1) % len(cut), in_flight] = True
    _assert_same(_flat(restored[REPLAY_PART]), _flat({**saved_replay, "truncated": cut}))
    # the counters, the RNGs and the window of finished episodes
    driver, collector = restored[DRIVER_PART], restored[DRIVER_PART]["collector"]
    for key in ("env_steps", "update_credit", "last_target_sync"):
        assert driver[key] == saved_driver[key], key
    for key in ("env_rngs", "generator", "recent", "seeded"):
        _assert_same(_flat(collector[key]), _flat(saved_driver["collector"][key]))


def test_two_resumes_from_a_mid_episode_checkpoint_write_the_same_rows(ray_local, tmp_path):
    first = train(_dqn(2), out_dir=tmp_path / "a").run_dir
    second = tmp_path / "b" / first.name
    shutil.copytree(first, second)
    for run_dir in (first, second):
        assert train(_dqn(3), resume=run_dir).iterations == 3
    rows, again = _rows(first), _rows(second)
    assert [row["env_steps"] for row in rows] == [1000, 2000, 3000]
    assert rows == again
    # the episodes cut at the checkpoint are not reported: the rows after it count the
    # episodes that ended after the resume
    assert rows[2]["train/num_episodes"] > 0
