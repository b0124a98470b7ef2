"""A teacher taken from the run itself: `checkpoint://{run}/best`, pinned when its phase starts.

Self-play drifts: a policy that beats the scripted opponents while they fill its games can
lose that skill once its own snapshots do (docs/league.md). A BC phase whose teacher is the
run's own best evaluated checkpoint anchors the student to what it could already do (as
AlphaStar's KL to its supervised policy), in one run instead of two.

`{run}` stands for the run folder; the checkpoint name after it (`best`, `latest`,
`iter_NNNNNN`; none: `latest`) is resolved when the phase first runs (and again every
`retake_every_env_steps` of the phase, if set: a "take") to the concrete `iter_NNNNNN` it
names then. That checkpoint is pinned (`pins.json`: retention keeps it) and the pin is part of
every later checkpoint, so a resumed run and recreated env runners get the same teacher even
though `best` moves on. A phase whose checkpoint does not exist yet (it starts in the iteration
of the run's first evaluation) trains plain PPO until it does. Driver side only, no Ray.
"""

import dataclasses
from pathlib import Path

from loguru import logger

from rl_platform.base.errors import UserError
from rl_platform.imitation.schedule import BCSettings
from rl_platform.spec.bc import THIS_RUN, uses_this_run
from rl_platform.spec.policy_uri import BEST_NAME, parse_policy_uri
from rl_platform.storage.checkpoints import CheckpointStore
from rl_platform.storage.layout import CHECKPOINTS_DIR, LATEST_FILE

Take = tuple[int, int]
"""(phase index, how many times the phase has re-taken its teacher before)."""


class RunTeachers:
    """Resolves `checkpoint://{run}/...` teachers of `run_dir`; remembers one pin per take."""

    def __init__(self, run_dir: Path | None) -> None:
        self.run_dir = run_dir
        self.pins: dict[Take, str] = {}
        """(phase, take) -> the `iter_NNNNNN` its teacher was taken from."""
        self._waiting: set[Take] = set()

    def resolve(
        self, settings: BCSettings, *, teacher_phase: int, retake_every: int | None = None
    ) -> BCSettings:
        """`settings` with a this-run teacher replaced by its pinned checkpoint's URI.

        `teacher_phase` is the phase whose teacher labels now (the last one after the
        curriculum ends, which keeps its last take); `retake_every` its
        `retake_every_env_steps`."""
        if not uses_this_run(settings.teacher):
            return settings
        assert settings.teacher is not None
        if settings.phase > teacher_phase:  # after the curriculum: the last teacher stays
            takes = [take for phase, take in self.pins if phase == teacher_phase]
            key = (teacher_phase, max(takes, default=0))
        else:
            key = (teacher_phase, settings.phase_env_steps // retake_every if retake_every else 0)
        name = self.pins.get(key) or self._pin(settings.teacher, key) or self._earlier(key)
        if name is None:  # nothing to learn from yet: plain PPO until a checkpoint exists
            return dataclasses.replace(
                settings, teacher=None, teacher_led=0.0, student_led=0.0, coef=0.0
            )
        _, _, query = settings.teacher.partition("?")
        uri = f"{self._prefix()}/{name}"
        return dataclasses.replace(settings, teacher=f"{uri}?{query}" if query else uri)

    def owns(self, uri: str | None) -> bool:
        """Whether `uri` is one this object resolved (a checkpoint of this run)."""
        return uri is not None and uri.partition("?")[0].rsplit("/", 1)[0] == self._prefix()

    def _prefix(self) -> str:
        return f"checkpoint://{self.run_dir.resolve()}" if self.run_dir else ""

    def _store(self) -> CheckpointStore:
        if self.run_dir is None:
            raise UserError(
                f"bc: a teacher from checkpoint://{THIS_RUN} needs a run folder (rlp train)"
            )
        return CheckpointStore(self.run_dir / CHECKPOINTS_DIR)

    def _earlier(self, key: Take) -> str | None:
        """The newest earlier take of the same phase, if any."""
        phase, take = key
        earlier = [t for p, t in self.pins if p == phase and t < take]
        return self.pins[(phase, max(earlier))] if earlier else None

    def _pin(self, teacher: str, key: Take) -> str | None:
        """Pin the checkpoint `teacher` names now; None (with a warning) if it is not there."""
        phase, take = key
        store = self._store()
        wanted = parse_policy_uri(teacher).checkpoint
        if wanted == BEST_NAME:
            found = store.best()
        elif wanted in (None, LATEST_FILE):
            found = store.latest()
        else:
            found = store.named(str(wanted))
        if found is None:
            if key not in self._waiting:
                self._waiting.add(key)
                logger.warning(
                    "bc phase {}: teacher {} has no checkpoint in {} yet; the phase trains "
                    "plain PPO until one is saved (start it after the first evaluation for "
                    "`best`)",
                    phase,
                    teacher,
                    store.root,
                )
            return None
        nth = f" (take {take})" if take else ""
        store.pin(found, reason=f"bc phase {phase} teacher{nth}")
        record = store.best_record() if wanted == BEST_NAME else None
        score = f" ({record['metric']} = {record['value']:.3g})" if record else ""
        logger.info("bc: phase {}{} learns from this run's {}{}", phase, nth, found.name, score)
        self.pins[key] = found.name
        return found.name

    # ----- checkpoint participation (through `BCCallback`) ------------------------------------
    def state(self) -> dict[str, str]:
        """The pins as `{"PHASE.TAKE": "iter_NNNNNN"}` (plain JSON for the checkpoint)."""
        return {f"{phase}.{take}": name for (phase, take), name in self.pins.items()}

    def restore(self, state: dict[str, str]) -> None:
        """Take the pins a checkpoint recorded; each must still be in the run folder."""
        pins: dict[Take, str] = {}
        for key, name in state.items():
            phase, _, take = str(key).partition(".")
            pins[(int(phase), int(take or 0))] = str(name)
        store = self._store() if pins else None
        for (phase, _), name in pins.items():
            if store is not None and store.named(name) is None:
                raise UserError(
                    f"bc phase {phase}: its teacher checkpoint {name} is gone from "
                    f"{store.root} (pins.json keeps it; was it deleted by hand?)"
                )
        self.pins = pins
