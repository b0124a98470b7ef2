"""The `bc:` block of an experiment spec: teacher, env slices, BC coefficient, schedule, phases.

Plain pydantic models with the spec's settings (frozen, unknown keys rejected).

    bc:
      teacher: scripted://duel/based     # any policy URI (docs/evaluation.md)
      teacher_led: 0.5                   # envs [0, 0.5 N) act with the teacher
      student_led: 0.5                   # the next 0.5 N act with the student, labelled
      coef: 1.0                          # weight of the BC cross-entropy
      schedule: {kind: linear, until_env_steps: 2000000, coef: 0.0, teacher_led: 0.0}

or a curriculum, `phases: [{teacher, teacher_led, student_led, coef, schedule, env_steps}]`.
A phase without a teacher is plain PPO (e.g. a first stretch before the teacher exists), and
`checkpoint://{run}/best` names a checkpoint of the run itself, taken when its phase starts
(`rl_platform.bc.run_teacher`).
`replay: {capacity, updates_per_minibatch}` adds BC-only gradient steps on the labels gathered
so far (`rl_platform.imitation.label_replay`).
"""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from rl_platform.base.errors import UserError
from rl_platform.base.module_ids import MAIN_MODULE_ID
from rl_platform.spec.base import PositiveInt
from rl_platform.spec.policy_uri import BEST_NAME, PolicyKind, parse_policy_uri

Fraction = Annotated[float, Field(ge=0.0, le=1.0)]
NonNegative = Annotated[float, Field(ge=0.0)]
_CONFIG = ConfigDict(
    frozen=True, extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False
)
PHASE_FIELDS = ("teacher", "teacher_led", "student_led", "coef", "schedule")
THIS_RUN = "{run}"
"""Stands for the run's own folder in a teacher URI: `checkpoint://{run}/best`."""
_TEACHING_FIELDS = ("teacher_led", "student_led", "coef", "schedule")


def _check_teacher(uri: str) -> str:
    try:
        parsed = parse_policy_uri(uri)
    except UserError as err:  # pydantic reports only ValueError nicely
        raise ValueError(str(err)) from None
    if THIS_RUN in uri and (parsed.kind != PolicyKind.CHECKPOINT or parsed.path != THIS_RUN):
        raise ValueError(
            f"{THIS_RUN} stands for this run's folder and goes right after checkpoint://, "
            f"e.g. checkpoint://{THIS_RUN}/best (got {uri!r})"
        )
    return uri


def uses_this_run(uri: str | None) -> bool:
    """Whether a teacher URI names a checkpoint of the run being trained."""
    return uri is not None and THIS_RUN in uri


class BCSchedule(BaseModel):
    """How `coef`, `teacher_led`, `student_led` change over a phase (env steps since its start)."""

    model_config = _CONFIG

    kind: Literal["constant", "linear"] = "constant"
    """`constant`: the start values throughout; `linear`: reach the end values by `until`."""
    until_env_steps: PositiveInt | None = None
    """Env steps (counted from the phase start) at which a linear schedule reaches its end."""
    coef: NonNegative | None = None
    """End value of `coef`; None keeps the start value."""
    teacher_led: Fraction | None = None
    """End value of `teacher_led`; None keeps the start value."""
    student_led: Fraction | None = None
    """End value of `student_led`; None keeps the start value."""

    @model_validator(mode="after")
    def _linear_has_end(self) -> "BCSchedule":
        if self.kind == "linear" and self.until_env_steps is None:
            raise ValueError("a linear schedule needs until_env_steps")
        return self


class BCReplay(BaseModel):
    """Replay of aggregated teacher labels: extra BC-only gradient steps (DAgger-style)."""

    model_config = _CONFIG

    capacity: PositiveInt = 200_000
    """Labelled env steps kept (the oldest are dropped); emptied when the teacher changes."""
    updates_per_minibatch: PositiveInt = 4
    """BC-only gradient steps on replayed labels after each PPO minibatch step (while coef > 0)."""
    minibatch_size: PositiveInt | None = None
    """Steps per replayed minibatch; None: `training.minibatch_size`."""


class BCPhase(BaseModel):
    """One curriculum phase: a teacher, env slices and BC weight for `env_steps` env steps."""

    model_config = _CONFIG

    teacher: str | None = None
    """Policy URI of the teacher: scripted://ENV/NAME, checkpoint://RUN_DIR, league://RUN/ID,
    checkpoint://{run}/best (this run's best checkpoint when the phase starts); None: plain PPO
    for the phase (leave `teacher_led`, `student_led`, `coef`, `schedule` out)."""
    teacher_led: Fraction = 0.5
    """Fraction of each env runner's envs (the first ones) that act with the teacher."""
    student_led: Fraction = 0.5
    """Fraction of the envs (after the teacher-led ones) where the student acts, labelled."""
    coef: NonNegative = 1.0
    """Weight of the cross-entropy to the teacher's actions."""
    schedule: BCSchedule = BCSchedule()
    """How coef and the fractions change during the phase."""
    env_steps: PositiveInt | None = None
    """Budget of this phase in env steps; None: until the run ends (last phase only)."""
    retake_every_env_steps: PositiveInt | None = None
    """With a `checkpoint://{run}/...` teacher: take it anew every N env steps of the phase
    (e.g. the `best` of then), so the teacher follows a better checkpoint; None: once."""

    @field_validator("teacher")
    @classmethod
    def _valid_teacher(cls, uri: str | None) -> str | None:
        return None if uri is None else _check_teacher(uri)

    @model_validator(mode="after")
    def _fractions_fit(self) -> "BCPhase":
        if self.retake_every_env_steps is not None and not uses_this_run(self.teacher):
            raise ValueError(
                f"retake_every_env_steps applies to a teacher from this run "
                f"(checkpoint://{THIS_RUN}/best), not {self.teacher!r}"
            )
        if self.teacher is None:
            # Compared with the defaults (not `model_fields_set`) so that a dump round-trips.
            fields = type(self).model_fields
            teaching = [n for n in _TEACHING_FIELDS if getattr(self, n) != fields[n].default]
            if teaching:
                raise ValueError(
                    f"a phase without a teacher is plain PPO; {teaching} need a `teacher`"
                )
            return self
        end_teacher = _or(self.schedule.teacher_led, self.teacher_led)
        end_student = _or(self.schedule.student_led, self.student_led)
        for when, teacher, student in (
            ("start", self.teacher_led, self.student_led),
            ("schedule end", end_teacher, end_student),
        ):
            if teacher + student > 1.0 + 1e-9:
                raise ValueError(
                    f"teacher_led + student_led must be <= 1 (at the {when}: "
                    f"{teacher} + {student}); the rest of the envs train with plain PPO"
                )
        return self


class BCSpec(BaseModel):
    """Behaviour cloning on top of PPO: one teacher (flat fields) or a list of `phases`."""

    model_config = _CONFIG

    teacher: str | None = None
    """Policy URI of the teacher (single phase); leave unset when using `phases`."""
    teacher_led: Fraction = 0.5
    """Fraction of each env runner's envs (the first ones) that act with the teacher."""
    student_led: Fraction = 0.5
    """Fraction of the envs (after the teacher-led ones) where the student acts, labelled."""
    coef: NonNegative = 1.0
    """Weight of the cross-entropy to the teacher's actions."""
    schedule: BCSchedule = BCSchedule()
    """How coef and the fractions change over the run."""
    phases: list[BCPhase] = []
    """Curriculum: phases run in order, each for its `env_steps`; then plain PPO."""
    module: str = MAIN_MODULE_ID
    """Multi-agent envs: the module whose agents are cloned (single-agent: the only module)."""
    replay: BCReplay | None = None
    """Replay the labels gathered so far for extra BC steps; None: each label is used once."""

    @field_validator("teacher")
    @classmethod
    def _valid_teacher(cls, uri: str | None) -> str | None:
        return None if uri is None else _check_teacher(uri)

    @model_validator(mode="after")
    def _one_form(self) -> "BCSpec":
        if not self.phases:
            if self.teacher is None:
                raise ValueError("set `teacher` (a policy URI) or a list of `phases`")
            self.single_phase()  # validates the fractions
            return self
        # Compared with the defaults, not `model_fields_set`, so that a dump round-trips.
        fields = type(self).model_fields
        flat = [name for name in PHASE_FIELDS if getattr(self, name) != fields[name].default]
        if flat:
            raise ValueError(f"with `phases`, set {flat} inside each phase instead")
        for index, phase in enumerate(self.phases[:-1]):
            if phase.env_steps is None:
                raise ValueError(f"phases[{index}] needs env_steps (only the last may omit it)")
        return self

    def check_this_run_teachers(self, *, first_evaluation: int | None) -> None:
        """A teacher from the run's own checkpoints (`checkpoint://{run}/...`) needs its phase
        to start after one exists: not at env step 0, and for `best` not before the first
        evaluation (`first_evaluation`: evaluation.every_env_steps; None: no evaluation)."""
        starts_at = 0
        for index, phase in enumerate(self.effective_phases()):
            where = f"bc.phases[{index}].teacher {phase.teacher!r}" if self.phases else "bc.teacher"
            if uses_this_run(phase.teacher):
                _check_phase_start(where, phase, starts_at, first_evaluation)
            starts_at += phase.env_steps or 0

    def single_phase(self) -> BCPhase:
        return BCPhase(
            teacher=str(self.teacher),
            teacher_led=self.teacher_led,
            student_led=self.student_led,
            coef=self.coef,
            schedule=self.schedule,
        )

    def effective_phases(self) -> list[BCPhase]:
        """The phases to run: `phases`, or the flat fields as one unbounded phase."""
        return list(self.phases) if self.phases else [self.single_phase()]


def _check_phase_start(
    where: str, phase: BCPhase, starts_at: int, first_evaluation: int | None
) -> None:
    if starts_at == 0:
        raise ValueError(
            f"{where}: the run has no checkpoint at env step 0; put a phase without a teacher "
            "before it, e.g. `{env_steps: 1000000}` (plain PPO)"
        )
    if parse_policy_uri(str(phase.teacher)).checkpoint == BEST_NAME:
        if first_evaluation is None:
            raise ValueError(f"{where}: `best` is kept by runs with an `evaluation:` block")
        if starts_at < first_evaluation:
            raise ValueError(
                f"{where}: the phase starts at {starts_at:,} env steps, before the first "
                f"evaluation (evaluation.every_env_steps = {first_evaluation:,}) marks a `best`"
            )


def _or(value: float | None, default: float) -> float:
    return default if value is None else value
