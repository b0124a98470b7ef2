"""Which envs act with the teacher: fixed slices of whole envs, by vector index (pure).

With N envs per env runner, envs `[0, T)` are teacher-led and `[T, S)` student-led, where
`T = round(N * teacher_led)` and `S = round(N * (teacher_led + student_led))` (half rounds up);
the rest are plain PPO. Every step of every env is labelled with the teacher's action; the
mode says how the step may be used:

* `TEACHER_LED` (1): the teacher acted. Off-policy for the student: BC only, never PPO.
* `STUDENT_LED` (2): the student acted. PPO and BC (the DAgger setting, Ross et al. 2011,
  https://arxiv.org/abs/1011.0686: the teacher labels the states the student visits).
* `PLAIN` (0): the student acted. PPO only.
"""

import math
from enum import IntEnum

TEACHER_ACTION = "teacher_action"
"""Per-step column: the teacher's action for the student's observation."""
BC_MODE = "bc_mode"
"""Per-step column: a `BCMode` value."""


class BCMode(IntEnum):
    PLAIN = 0
    TEACHER_LED = 1
    STUDENT_LED = 2


def _half_up(value: float) -> int:
    return math.floor(value + 0.5 + 1e-9)


def slice_bounds(*, num_envs: int, teacher_led: float, student_led: float) -> tuple[int, int]:
    """(T, S): envs [0, T) teacher-led, [T, S) student-led, [S, N) plain."""
    teacher_end = min(num_envs, _half_up(num_envs * teacher_led))
    student_end = min(num_envs, _half_up(num_envs * (teacher_led + student_led)))
    return teacher_end, max(student_end, teacher_end)


def mode_for_env(index: int, *, num_envs: int, teacher_led: float, student_led: float) -> BCMode:
    """The mode of the env at vector index `index` of `num_envs`."""
    teacher_end, student_end = slice_bounds(
        num_envs=num_envs, teacher_led=teacher_led, student_led=student_led
    )
    if index < teacher_end:
        return BCMode.TEACHER_LED
    return BCMode.STUDENT_LED if index < student_end else BCMode.PLAIN
