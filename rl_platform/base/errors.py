"""Exception types that the CLI edge turns into clean messages with exit code 2, and the exit
code of a training that stopped.

User errors are raised deep in the library with enough context to be shown as-is; the CLI
catches `UserError` once and prints it without a traceback.
"""

from collections.abc import Iterator


class UserError(Exception):
    """Something the user handed us is wrong; the message says what and how to fix it."""

    exit_code = 2


class SpecError(UserError):
    """An experiment spec failed to load or validate. Carries one line per problem."""

    def __init__(self, problems: list[str], *, source: str = "spec") -> None:
        self.problems = problems
        self.source = source
        super().__init__("\n".join(problems))

    def __str__(self) -> str:
        if len(self.problems) == 1:  # one problem, one line
            problem = self.problems[0]
            return problem if problem.startswith(f"{self.source}:") else f"{self.source}: {problem}"
        lines = [f"{self.source}: {len(self.problems)} problem(s)"]
        lines += [f"  - {problem}" for problem in self.problems]
        return "\n".join(lines)


class UnsafePathError(UserError):
    """A name that ends up in a file path would escape its folder or is not portable."""


class IntegrityError(UserError):
    """A stored file does not match the hash recorded for it (tampered or truncated)."""


TRAINING_STOPPED_EXIT = 3
"""How `rlp` exits when training stopped: non-finite losses or weights or a lost Ray process
(`TrainingHealthError`, at `commands/error_boundary.py`), or a lost raylet
(`ray_runtime/lost_ray.py`). Declared here because both of those layers import `base/`."""


class TrainingHealthError(RuntimeError):
    """Training produced non-finite losses or weights; the run stops, last good checkpoint kept."""


def causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what caused it, outermost first: `__cause__`, and the `.cause` of a Ray
    error wrapping a remote exception."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        yield current
        seen.add(id(current))
        cause = getattr(current, "cause", None)
        current = current.__cause__ or (cause if isinstance(cause, BaseException) else None)


def user_error_in(exc: BaseException) -> UserError | None:
    """The `UserError` that caused `exc`, if any: RLlib re-raises an env's exception as a bare
    `RuntimeError` (`raise RuntimeError from e`) and Ray wraps a remote one (`.cause`), so a
    user's env error would otherwise be reported as our bug."""
    return next((c for c in causes(exc) if isinstance(c, UserError)), None)
