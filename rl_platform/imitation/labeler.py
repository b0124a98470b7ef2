"""Finding the teacher-labelling piece in an env runner's connector pipeline (no Ray).

The driver pushes BC settings into it (`rl_platform.bc.callback`) and the array env runner
reads its settings and teacher (`rl_platform.env_runner.bc_rows`). Matched by shape, the
`TeacherLabeler` protocol, so neither needs to import the connector itself
(`rl_platform.bc.teacher_labels.TeacherLabels`, which loads Ray and the policy stack).
"""

from collections.abc import Collection
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class TeacherLabeler(Protocol):
    """What callers use of `TeacherLabels`."""

    settings: Any
    modules: Collection[str]
    multi_agent: bool

    def teacher(self) -> Any: ...

    def apply_settings(self, settings: Any) -> None: ...


def find_labelers(pipeline: Any) -> list[TeacherLabeler]:
    """Every teacher-labelling piece in a connector pipeline (nested pipelines included)."""
    found: list[TeacherLabeler] = []
    for piece in getattr(pipeline, "connectors", []) or []:
        if isinstance(piece, TeacherLabeler):
            found.append(piece)
        found += find_labelers(piece)
    return found
