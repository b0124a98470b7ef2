"""BC settings as pure functions of the env steps sampled so far (no Ray, no state).

Everything the env runners and learners need at a given moment (phase, teacher, env slices,
BC coefficient) is `settings_at(bc_spec, env_steps)`. Because nothing else goes in, a resumed
run lands in exactly the phase and schedule point it left: the env step count is restored
with the algorithm state.

Phases run back to back: phase k covers env steps [sum of budgets before k, + its budget).
After the last bounded phase the run is plain PPO (coef 0, no slices), still labelled by the
last teacher so `bc/accuracy` keeps tracking how close the student stays to it.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from rl_platform.spec.bc import BCPhase, BCSchedule, BCSpec


@dataclass(frozen=True)
class BCSettings:
    """What the env runners and learners apply during one stretch of training."""

    phase: int
    """Index into the phases; `len(phases)` once the curriculum is over."""
    teacher: str | None
    """Policy URI of the teacher (labels every step); None: no teacher, plain PPO."""
    teacher_led: float
    """Fraction of envs acting with the teacher."""
    student_led: float
    """Fraction of envs acting with the student, labelled by the teacher."""
    coef: float
    """Weight of the BC cross-entropy."""
    phase_env_steps: int
    """Env steps since the phase started."""


def linear_value(*, start: float, end: float, env_steps: int, until: int) -> float:
    """`start` at 0 env steps, `end` at `until` and after, linear in between."""
    progress = min(max(env_steps / until, 0.0), 1.0)
    return start + (end - start) * progress


def scheduled(start: float, end: float | None, *, schedule: BCSchedule, env_steps: int) -> float:
    """One scheduled quantity `env_steps` into its phase (`end` None: constant)."""
    if schedule.kind == "constant" or end is None or schedule.until_env_steps is None:
        return start
    return linear_value(start=start, end=end, env_steps=env_steps, until=schedule.until_env_steps)


def phase_at(phases: Sequence[BCPhase], env_steps: int) -> tuple[int, int]:
    """(index of the phase running at `env_steps`, env step at which it started)."""
    start = 0
    for index, phase in enumerate(phases):
        if phase.env_steps is None or env_steps < start + phase.env_steps:
            return index, start
        start += phase.env_steps
    return len(phases), start


def settings_at(spec: BCSpec, env_steps: int) -> BCSettings:
    """The settings in force after `env_steps` env steps of training."""
    phases = spec.effective_phases()
    index, start = phase_at(phases, env_steps)
    into = max(env_steps - start, 0)
    if index == len(phases):
        return BCSettings(index, phases[-1].teacher, 0.0, 0.0, 0.0, into)
    phase = phases[index]
    if phase.teacher is None:
        return BCSettings(index, None, 0.0, 0.0, 0.0, into)
    rule = phase.schedule
    return BCSettings(
        phase=index,
        teacher=phase.teacher,
        teacher_led=scheduled(phase.teacher_led, rule.teacher_led, schedule=rule, env_steps=into),
        student_led=scheduled(phase.student_led, rule.student_led, schedule=rule, env_steps=into),
        coef=scheduled(phase.coef, rule.coef, schedule=rule, env_steps=into),
        phase_env_steps=into,
    )
