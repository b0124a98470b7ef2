"""Env slices act with the right policy: teacher-led envs' actions are the teacher's, every step
carries the teacher's label and its mode, and the slices have the configured sizes.

Single-agent (CartPole, 4 envs: 2 teacher-led, 1 student-led, 1 plain) and multi-agent (the
duel, `main` vs the scripted `based` through a league, 2 envs: 1 teacher-led, 1 student-led).
"""

import functools

import numpy as np
import pytest

from rl_platform.bc.extension import bc_extension
from rl_platform.imitation.slicing import BC_MODE, TEACHER_ACTION, BCMode
from rl_platform.rllib.config import build_algorithm_config
from rl_platform.spec import ExperimentSpec
from rl_platform.teachers.cartpole import make_balance
from tests.integration.episode_support import module_episodes

STEPS_PER_ENV = 30


def _columns(sa_episode) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(sa_episode)
    actions = np.asarray(sa_episode.get_actions(slice(0, n)))
    labels = np.asarray(sa_episode.get_extra_model_outputs(TEACHER_ACTION, slice(0, n)))
    modes = np.asarray(sa_episode.get_extra_model_outputs(BC_MODE, slice(0, n)))
    return actions, labels, modes


@pytest.fixture
def cartpole_algo(ray_local):
    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_slicing",
            "env": {"id": "CartPole-v1", "envs_per_runner": 4},
            "model": {"hidden": [8]},
            "training": {"train_batch_size": 200, "minibatch_size": 100, "num_epochs": 1},
            "bc": {
                "teacher": "scripted://cartpole/balance",
                "teacher_led": 0.5,
                "student_led": 0.25,
            },
        }
    )
    algo = build_algorithm_config(spec, extensions=[bc_extension]).build_algo()
    yield algo
    algo.stop()


def test_cartpole_slices_act_with_the_right_policy(cartpole_algo):
    episodes = cartpole_algo.env_runner.sample(num_timesteps=4 * STEPS_PER_ENV, explore=True)
    teacher = make_balance({})
    rng = np.random.default_rng(0)
    steps = {mode: 0 for mode in BCMode}
    resets = {mode: 0 for mode in BCMode}
    student_disagreements = 0
    for episode in episodes:
        actions, labels, modes = _columns(episode)
        observations = np.asarray(episode.get_observations(slice(0, len(episode))))
        # Every step is labelled with the teacher's action for the student's observation.
        np.testing.assert_array_equal(labels, teacher(observations, rng))
        assert len(set(modes.tolist())) == 1, "an env keeps its slice for a whole chunk"
        mode = BCMode(int(modes[0]))
        steps[mode] += len(episode)
        resets[mode] += int(episode.is_done)  # the env's next vector step is a reset
        if mode == BCMode.TEACHER_LED:
            np.testing.assert_array_equal(actions, labels)
            # The stored logp belongs to the stored (teacher's) action.
            logits = np.asarray(
                episode.get_extra_model_outputs("action_dist_inputs", slice(0, len(episode)))
            )
            logp = np.asarray(
                episode.get_extra_model_outputs("action_logp", slice(0, len(episode)))
            )
            expected = logits[np.arange(len(actions)), actions] - np.log(np.exp(logits).sum(1))
            np.testing.assert_allclose(logp, expected, rtol=1e-4, atol=1e-5)
        else:
            student_disagreements += int((actions != labels).sum())
    # 4 envs step together: 2 teacher-led, 1 student-led, 1 plain. The teacher balances the
    # pole (no resets), so V = steps[TEACHER_LED] / 2 vector steps ran; every other env spent
    # each of them on a step or on a reset after a finished episode.
    assert resets[BCMode.TEACHER_LED] == 0
    vector_steps = steps[BCMode.TEACHER_LED] // 2
    assert vector_steps >= STEPS_PER_ENV and steps[BCMode.TEACHER_LED] % 2 == 0
    for mode in (BCMode.STUDENT_LED, BCMode.PLAIN):
        assert steps[mode] + resets[mode] == vector_steps, mode
    # The untrained student does not play like the teacher: its envs are really its own.
    assert student_disagreements > 0


def test_settings_pushed_by_the_driver_move_the_slices(cartpole_algo):
    from rl_platform.bc.callback import apply_to_env_runner
    from rl_platform.imitation.schedule import BCSettings

    settings = BCSettings(0, "scripted://cartpole/balance", 0.0, 1.0, 1.0, 0)
    assert cartpole_algo.env_runner_group.foreach_env_runner(
        functools.partial(apply_to_env_runner, settings), local_env_runner=True
    ) == [1]
    episodes = cartpole_algo.env_runner.sample(num_timesteps=4 * 5, explore=True)
    modes = {int(m) for e in episodes for m in _columns(e)[2]}
    assert modes == {BCMode.STUDENT_LED}


def _sample_duel_league(tmp_path, runner: str, bc: dict, *, learner: str = "rllib") -> list:
    """Episodes of a tiny duel league (main vs `based`) with this `bc:` block (rollout
    batches with `learner: array`)."""
    from rl_platform.rllib.league_callback import league_extension

    spec = ExperimentSpec.model_validate(
        {
            "name": "bc_slicing_duel",
            "env": {
                "id": "rlp/Duel-v0",
                "envs_per_runner": 2,
                "kwargs": {"max_steps": 200},
                "runner": runner,
            },
            "model": {"hidden": [16]},
            "training": {
                "train_batch_size": 200,
                "minibatch_size": 100,
                "num_epochs": 1,
                "learner": learner,
            },
            "league": {"opponent_mix": {"based": 1.0}, "scripted": ["based"], "slots": 1},
            "bc": bc,
        }
    )
    extension = functools.partial(league_extension, run_dir=tmp_path)
    algo = build_algorithm_config(spec, extensions=[extension, bc_extension]).build_algo()
    try:
        return algo.env_runner.sample(num_timesteps=2 * STEPS_PER_ENV, explore=True)
    finally:
        algo.stop()


@pytest.mark.parametrize("runner", ["rllib", "vector"])
def test_duel_main_is_cloned_and_the_scripted_opponent_untouched(ray_local, tmp_path, runner):
    bc = {"teacher": "scripted://duel/based", "teacher_led": 0.5, "student_led": 0.5}
    episodes = _sample_duel_league(tmp_path, runner, bc)
    steps = {mode: 0 for mode in BCMode}
    for episode in episodes:
        for module_id, sa_episode in module_episodes(episode):
            if len(sa_episode) == 0:
                continue
            if module_id != "main":
                assert TEACHER_ACTION not in sa_episode.extra_model_outputs
                continue
            actions, labels, modes = _columns(sa_episode)
            mode = BCMode(int(modes[0]))
            steps[mode] += len(sa_episode)
            if mode == BCMode.TEACHER_LED:
                np.testing.assert_array_equal(actions, labels)
    assert steps[BCMode.TEACHER_LED] == steps[BCMode.STUDENT_LED] == STEPS_PER_ENV
    assert steps[BCMode.PLAIN] == 0


@pytest.mark.parametrize("runner", ["rllib", "vector"])
def test_a_phase_without_teacher_leaves_every_step_plain(ray_local, tmp_path, runner):
    bc = {"phases": [{"env_steps": 10_000}, {"teacher": "scripted://duel/based"}]}
    episodes = _sample_duel_league(tmp_path, runner, bc)
    main_steps = 0
    for episode in episodes:
        for module_id, sa_episode in module_episodes(episode):
            if module_id != "main" or len(sa_episode) == 0:
                continue
            _, labels, modes = _columns(sa_episode)
            assert set(modes.tolist()) == {BCMode.PLAIN} and set(labels.tolist()) == {-1}
            main_steps += len(sa_episode)
    assert main_steps == 2 * STEPS_PER_ENV


def test_the_array_learners_rows_carry_the_labels(ray_local, tmp_path):
    """On the array runner with the array learner, main's rollout rows carry the same
    columns: teacher-led steps acted with the teacher's label, one game per slice."""
    bc = {"teacher": "scripted://duel/based", "teacher_led": 0.5, "student_led": 0.5}
    batches = _sample_duel_league(tmp_path, "vector", bc, learner="array")
    (main,) = [batch for batch in batches if batch.module_id == "main"]
    valid = main.valid
    modes, labels = main.columns[BC_MODE][valid], main.columns[TEACHER_ACTION][valid]
    teacher_led = modes == BCMode.TEACHER_LED
    np.testing.assert_array_equal(main.actions[valid][teacher_led], labels[teacher_led])
    assert int(teacher_led.sum()) == int((modes == BCMode.STUDENT_LED).sum()) == STEPS_PER_ENV
    assert not bool((modes == BCMode.PLAIN).any()) and bool((labels >= 0).all())
