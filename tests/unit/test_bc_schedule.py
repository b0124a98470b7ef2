"""BC schedule values at chosen env steps, the curriculum phase as a function of env steps,
env slices, and the `bc:` spec's validation."""

import pytest
from pydantic import ValidationError

from rl_platform.imitation.schedule import linear_value, phase_at, settings_at
from rl_platform.imitation.slicing import BCMode, mode_for_env, slice_bounds
from rl_platform.spec.bc import BCSpec

TEACHER = "scripted://cartpole/balance"


def test_linear_value_at_chosen_steps():
    values = [linear_value(start=1.0, end=0.0, env_steps=s, until=1000) for s in (0, 250, 1000)]
    assert values == pytest.approx([1.0, 0.75, 0.0])
    assert linear_value(start=1.0, end=0.0, env_steps=5000, until=1000) == 0.0  # clamped


def test_constant_schedule_keeps_the_start_values():
    spec = BCSpec(teacher=TEACHER, teacher_led=0.25, student_led=0.5, coef=2.0)
    for steps in (0, 10**6):
        s = settings_at(spec, steps)
        assert (s.phase, s.teacher_led, s.student_led, s.coef) == (0, 0.25, 0.5, 2.0)


def test_linear_decay_of_coef_and_slices():
    spec = BCSpec.model_validate(
        {
            "teacher": TEACHER,
            "teacher_led": 0.5,
            "student_led": 0.5,
            "coef": 1.0,
            "schedule": {
                "kind": "linear",
                "until_env_steps": 1000,
                "coef": 0.0,
                "teacher_led": 0.0,
            },
        }
    )
    mid = settings_at(spec, 500)
    assert (mid.coef, mid.teacher_led, mid.student_led) == pytest.approx((0.5, 0.25, 0.5))
    end = settings_at(spec, 2000)
    assert (end.coef, end.teacher_led, end.student_led) == pytest.approx((0.0, 0.0, 0.5))


PHASES = {
    "phases": [
        {"teacher": "random", "teacher_led": 1.0, "student_led": 0.0, "env_steps": 100},
        {
            "teacher": TEACHER,
            "teacher_led": 0.5,
            "coef": 2.0,
            "env_steps": 200,
            "schedule": {"kind": "linear", "until_env_steps": 200, "coef": 0.0},
        },
    ]
}


@pytest.mark.parametrize(
    ("env_steps", "phase", "start"), [(0, 0, 0), (99, 0, 0), (100, 1, 100), (299, 1, 100)]
)
def test_phase_from_env_steps(env_steps, phase, start):
    spec = BCSpec.model_validate(PHASES)
    assert phase_at(spec.effective_phases(), env_steps) == (phase, start)
    assert settings_at(spec, env_steps).phase == phase


def test_phase_schedule_counts_from_the_phase_start():
    spec = BCSpec.model_validate(PHASES)
    s = settings_at(spec, 150)  # 50 steps into phase 1
    assert (s.teacher, s.phase_env_steps, s.coef) == (TEACHER, 50, pytest.approx(1.5))


def test_after_the_last_bounded_phase_the_run_is_plain_ppo():
    spec = BCSpec.model_validate(PHASES)
    s = settings_at(spec, 300)
    assert (s.phase, s.teacher_led, s.student_led, s.coef) == (2, 0.0, 0.0, 0.0)
    assert s.teacher == TEACHER  # still labels, for bc/accuracy


def test_resume_lands_in_the_same_settings():
    spec = BCSpec.model_validate(PHASES)
    # Settings are a pure function of env steps: recomputing after a restore is exact.
    assert settings_at(spec, 237) == settings_at(BCSpec.model_validate(spec.model_dump()), 237)


@pytest.mark.parametrize(
    ("n", "teacher_led", "student_led", "bounds"),
    [(8, 0.5, 0.5, (4, 8)), (8, 0.25, 0.25, (2, 4)), (3, 0.5, 0.5, (2, 3)), (4, 0.0, 0.0, (0, 0))],
)
def test_slice_bounds(n, teacher_led, student_led, bounds):
    assert slice_bounds(num_envs=n, teacher_led=teacher_led, student_led=student_led) == bounds


def test_modes_by_env_index():
    modes = [mode_for_env(i, num_envs=4, teacher_led=0.5, student_led=0.25) for i in range(4)]
    assert modes == [BCMode.TEACHER_LED, BCMode.TEACHER_LED, BCMode.STUDENT_LED, BCMode.PLAIN]


@pytest.mark.parametrize(
    "bad",
    [
        {"teacher": TEACHER, "teacher_led": 0.8, "student_led": 0.5},
        {"teacher": TEACHER, "schedule": {"kind": "linear", "coef": 0.0}},
        {"teacher": "scripted:/cartpole"},
        {"teacher_led": 0.5},
        {"coef": 2.0, **PHASES},
        {"phases": [{"teacher": TEACHER}, {"teacher": TEACHER}]},
        {"phases": [{"env_steps": 100, "coef": 0.5}, {"teacher": TEACHER}]},  # no teacher
        {"teacher": "checkpoint://runs/{run}/best"},  # {run} is the whole run folder
        {"teacher": "league://{run}/main_v1"},
        {"phases": [{"env_steps": 100}, {"teacher": TEACHER, "retake_every_env_steps": 50}]},
    ],
)
def test_invalid_specs_are_rejected(bad):
    with pytest.raises(ValidationError):
        BCSpec.model_validate(bad)


def test_a_phase_without_teacher_is_plain_ppo():
    spec = BCSpec.model_validate(
        {"phases": [{"env_steps": 100}, {"teacher": "checkpoint://{run}/best", "coef": 0.1}]}
    )
    first, second = settings_at(spec, 50), settings_at(spec, 150)
    assert (first.teacher, first.teacher_led, first.student_led, first.coef) == (None, 0, 0, 0)
    assert (second.teacher, second.coef) == ("checkpoint://{run}/best", 0.1)
    assert BCSpec.model_validate(spec.model_dump()) == spec  # the run folder's spec.yaml


# ----- the driver callback pushes settings derived from env steps ----------------------------
class _Group:
    def __init__(self, target):
        self.target = target

    def foreach_env_runner(self, func, **kwargs):
        return [func(self.target)]

    def foreach_learner(self, func, **kwargs):
        return [func(self.target)]


class _Learner:
    settings = None

    def set_bc_settings(self, settings):
        self.settings = settings


class _Algorithm:
    def __init__(self, env_steps: int, labeler):
        from types import SimpleNamespace

        self.metrics = SimpleNamespace(peek=lambda key, default=0: env_steps)
        self.env_runner_group = _Group(
            SimpleNamespace(_env_to_module=SimpleNamespace(connectors=[labeler]))
        )
        self.learner = _Learner()
        self.learner_group = _Group(self.learner)


def test_resume_and_iterations_push_the_phase_of_the_env_steps():
    from rl_platform.bc.callback import BCCallback
    from rl_platform.bc.teacher_labels import TeacherLabels

    spec = BCSpec.model_validate(PHASES)
    labeler = TeacherLabels(settings=settings_at(spec, 0), env_id="CartPole-v1", multi_agent=False)
    algorithm = _Algorithm(150, labeler)  # restored at 150 env steps: phase 1
    callback = type("Bound", (BCCallback,), {"bc_spec": spec})()
    callback.restore_parts({}, algorithm=algorithm)
    assert labeler.settings == algorithm.learner.settings == settings_at(spec, 150)
    assert labeler.settings.phase == 1 and labeler.settings.coef == pytest.approx(1.5)

    result = {"num_env_steps_sampled_lifetime": 300, "env_runners": {}}
    callback.on_train_result(algorithm=algorithm, result=result)
    # The iteration is reported with the settings it ran under; the next one runs phase 2.
    assert result["env_runners"]["curriculum/phase"] == 1.0
    assert labeler.settings.phase == algorithm.learner.settings.phase == 2
