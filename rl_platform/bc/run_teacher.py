"""A teacher taken from the run itself: `checkpoint://{run}/best`, pinned when its phase starts.

Self-play drifts: a policy that beats the scripted opponents while they fill its games can
lose that skill once its own snapshots do (docs/league.md). A BC phase whose teacher is the
run's own best evaluated checkpoint anchors the student to what it could already do (as
AlphaStar's KL to its supervised policy), in one run instead of two.

`{run}` stands for the run folder; the checkpoint name after it (`best`, `latest`,
`iter_NNNNNN`; none: `latest`) is resolved **once**, when the phase first runs, to the
concrete `iter_NNNNNN` it names then. That checkpoint is pinned (`pins.json`: retention keeps
it) and the pin is part of every later checkpoint, so a resumed run and recreated env runners
get the same teacher even though `best` moves on. Driver side only, no Ray.
"""

import dataclasses
from pathlib import Path

from loguru import logger

from rl_platform.bc.schedule import BCSettings
from rl_platform.bc.spec import THIS_RUN, uses_this_run
from rl_platform.errors import UserError
from rl_platform.policies.uri import parse_policy_uri
from rl_platform.storage.checkpoints import CheckpointStore
from rl_platform.storage.layout import BEST_NAME, CHECKPOINTS_DIR, LATEST_FILE


class RunTeachers:
    """Resolves `checkpoint://{run}/...` teachers of `run_dir`; remembers one pin per phase."""

    def __init__(self, run_dir: Path | None) -> None:
        self.run_dir = run_dir
        self.pins: dict[int, str] = {}
        """Phase index -> the `iter_NNNNNN` its teacher was taken from."""

    def resolve(self, settings: BCSettings, *, teacher_phase: int) -> BCSettings:
        """`settings` with a this-run teacher replaced by its pinned checkpoint's URI.

        `teacher_phase` is the phase whose teacher labels now (the last one after the
        curriculum ends)."""
        if not uses_this_run(settings.teacher):
            return settings
        assert settings.teacher is not None
        name = self.pins.get(teacher_phase) or self._pin(settings.teacher, teacher_phase)
        _, _, query = settings.teacher.partition("?")
        uri = f"checkpoint://{self._store().root.parent.resolve()}/{name}"
        return dataclasses.replace(settings, teacher=f"{uri}?{query}" if query else uri)

    def _store(self) -> CheckpointStore:
        if self.run_dir is None:
            raise UserError(
                f"bc: a teacher from checkpoint://{THIS_RUN} needs a run folder (rlp train)"
            )
        return CheckpointStore(self.run_dir / CHECKPOINTS_DIR)

    def _pin(self, teacher: str, phase: int) -> str:
        store = self._store()
        wanted = parse_policy_uri(teacher).checkpoint
        if wanted == BEST_NAME:
            found = store.best()
        elif wanted in (None, LATEST_FILE):
            found = store.latest()
        else:
            found = store.root / str(wanted) if (store.root / str(wanted)).is_dir() else None
        if found is None:
            raise UserError(
                f"bc phase {phase}: teacher {teacher!r} has no checkpoint to take yet in "
                f"{store.root}; start the phase later (after the run's first evaluation for "
                "`best`)"
            )
        store.pin(found, reason=f"bc phase {phase} teacher")
        record = store.best_record() if wanted == BEST_NAME else None
        score = f" ({record['metric']} = {record['value']:.3g})" if record else ""
        logger.info("bc: phase {} learns from this run's {}{}", phase, found.name, score)
        self.pins[phase] = found.name
        return found.name

    # ----- checkpoint participation (through `BCCallback`) ------------------------------------
    def state(self) -> dict[str, str]:
        return {str(phase): name for phase, name in self.pins.items()}

    def restore(self, state: dict[str, str]) -> None:
        """Take the pins a checkpoint recorded; each must still be in the run folder."""
        pins = {int(phase): str(name) for phase, name in state.items()}
        for phase, name in pins.items():
            if not (self._store().root / name).is_dir():
                raise UserError(
                    f"bc phase {phase}: its teacher checkpoint {name} is gone from "
                    f"{self._store().root} (pins.json keeps it; was it deleted by hand?)"
                )
        self.pins = pins
