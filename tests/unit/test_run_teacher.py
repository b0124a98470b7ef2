"""`checkpoint://{run}/...` teachers: resolved to the run's checkpoint when their phase starts,
pinned against retention, unchanged when `best` moves on, restored from a checkpoint's pins."""

import numpy as np
import pytest

from rl_platform.base.errors import UserError
from rl_platform.bc.run_teacher import RunTeachers
from rl_platform.imitation.schedule import BCSettings
from rl_platform.storage.checkpoints import CheckpointStore
from rl_platform.storage.layout import CHECKPOINTS_DIR


def _settings(teacher: str | None, phase: int = 1, into: int = 0) -> BCSettings:
    return BCSettings(phase, teacher, 0.0, 1.0, 0.1, into)


def _save(store: CheckpointStore, iteration: int) -> None:
    weights = {"w": np.full(2, iteration, np.float32)}
    store.save(iteration=iteration, parts={"algorithm": weights}, meta={})


@pytest.fixture
def store(tmp_path) -> CheckpointStore:
    return CheckpointStore(tmp_path / CHECKPOINTS_DIR, keep_last=1)


def test_best_is_pinned_when_the_phase_starts_and_kept(tmp_path, store):
    _save(store, 1)
    store.mark_best(store.root / "iter_000001", metric="eval/greedy/win_rate/based", value=0.9)
    _save(store, 2)
    teachers = RunTeachers(tmp_path)
    resolved = teachers.resolve(_settings("checkpoint://{run}/best?sample=true"), teacher_phase=1)
    assert resolved.teacher == f"checkpoint://{tmp_path.resolve()}/iter_000001?sample=true"
    assert resolved.coef == 0.1 and teachers.state() == {"1.0": "iter_000001"}

    _save(store, 3)  # `best` moves on and retention runs: the pinned teacher stays
    store.mark_best(store.root / "iter_000003", metric="eval/greedy/win_rate/based", value=0.95)
    _save(store, 4)
    assert (store.root / "iter_000001").is_dir()
    again = teachers.resolve(_settings("checkpoint://{run}/best?sample=true"), teacher_phase=1)
    assert again.teacher == resolved.teacher


def test_other_teachers_pass_through(tmp_path):
    teachers = RunTeachers(tmp_path)
    for teacher in (None, "scripted://duel/based"):
        assert teachers.resolve(_settings(teacher), teacher_phase=1) == _settings(teacher)
    assert teachers.state() == {}


def test_pins_are_restored_and_checked(tmp_path, store):
    _save(store, 1)
    _save(store, 2)
    teachers = RunTeachers(tmp_path)
    teachers.restore({"1.0": "iter_000002"})
    resolved = teachers.resolve(_settings("checkpoint://{run}/latest"), teacher_phase=1)
    assert resolved.teacher.endswith("/iter_000002")
    with pytest.raises(UserError, match="iter_000001 is gone"):
        RunTeachers(tmp_path).restore({"1.0": "iter_000001"})  # pruned: keep_last=1


def test_a_phase_waits_for_its_first_checkpoint(tmp_path, store):
    teachers = RunTeachers(tmp_path)
    waiting = teachers.resolve(_settings("checkpoint://{run}/best"), teacher_phase=1)
    assert (waiting.teacher, waiting.student_led, waiting.coef) == (None, 0.0, 0.0)  # plain PPO
    assert teachers.state() == {}
    _save(store, 1)
    store.mark_best(store.root / "iter_000001", metric="eval/greedy/win_rate/based", value=0.5)
    taken = teachers.resolve(_settings("checkpoint://{run}/best", into=300), teacher_phase=1)
    assert taken.teacher.endswith("/iter_000001") and teachers.state() == {"1.0": "iter_000001"}
    with pytest.raises(UserError, match="needs a run folder"):
        RunTeachers(None).resolve(_settings("checkpoint://{run}/best"), teacher_phase=1)


def test_a_phase_retakes_best_every_n_env_steps(tmp_path, store):
    teacher, metric = "checkpoint://{run}/best", "eval/greedy/win_rate/based"
    _save(store, 1)
    store.mark_best(store.root / "iter_000001", metric=metric, value=0.8)
    teachers = RunTeachers(tmp_path)

    def uri(into: int, phase: int = 1) -> str:
        settings = _settings(teacher, phase=phase, into=into)
        return teachers.resolve(settings, teacher_phase=1, retake_every=200).teacher

    assert uri(0).endswith("/iter_000001")
    _save(store, 2)
    store.mark_best(store.root / "iter_000002", metric=metric, value=0.9)
    assert uri(199).endswith("/iter_000001")  # the first take holds for 200 env steps
    assert uri(200).endswith("/iter_000002")  # the second takes the `best` of then
    _save(store, 3)
    store.mark_best(store.root / "iter_000003", metric=metric, value=0.95)
    assert uri(50, phase=2).endswith("/iter_000002")  # after the curriculum: the last take
    assert teachers.state() == {"1.0": "iter_000001", "1.1": "iter_000002"}
    assert store.pins() == {
        "iter_000001": "bc phase 1 teacher",
        "iter_000002": "bc phase 1 teacher (take 1)",
    }
    resumed = RunTeachers(tmp_path)
    resumed.restore(teachers.state())
    assert resumed.pins == teachers.pins


def test_a_preloaded_teacher_needs_no_run_folder():
    """Remote env runners get the run teacher's spec and weights from the driver."""
    import gymnasium as gym

    from rl_platform import load_spec
    from rl_platform.bc.teacher import Teacher
    from rl_platform.policies.rebuild import build_module
    from tests.conftest import EXPERIMENTS

    spec = load_spec(EXPERIMENTS / "cartpole_ppo.yaml")
    env = gym.make("CartPole-v1")
    module = build_module(
        spec, observation_space=env.observation_space, action_space=env.action_space, weights=None
    ).module
    weights = {name: value.detach().numpy() for name, value in module.state_dict().items()}
    teacher = Teacher(
        env_id="CartPole-v1",
        observation_space=env.observation_space,
        action_space=env.action_space,
        seed=0,
    )
    uri = "checkpoint:///nowhere/on/this/node/iter_000003"
    teacher.preload(uri, spec, weights)
    obs = np.stack([env.reset(seed=i)[0] for i in range(4)])
    actions = teacher.act(uri, obs, keys=[(i,) for i in range(4)], live_episodes=set(range(4)))
    assert actions.shape == (4,) and set(actions.tolist()) <= {0, 1}
    with pytest.raises(UserError, match="does not exist"):  # not preloaded: read from disk
        teacher.act(uri.replace("iter_000003", "iter_000004"), obs, keys=[(0,)], live_episodes={0})
