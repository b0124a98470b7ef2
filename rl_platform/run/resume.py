"""What `rlp train --resume TARGET` resumes from, checked before anything is written.

TARGET is a run folder (resume from its `latest` checkpoint) or one checkpoint folder inside a
run (rewind to it). Either must verify whole (`storage.checkpoints.load_checkpoint`); nothing
intact to resume from is an error (exit 2), never a silent restart at iteration 0. A resumed
spec that differs from the run's `spec.yaml` is written beside it as `spec.resume-N.yaml` (the
original stays) and the changed keys are recorded in `resumes.jsonl`. A checkpoint whose
iteration already meets the spec's `stop` (the run finished, or `stop` was lowered below it)
is where an uninterrupted run ends: the resume trains nothing (`stop_reached_at`).
"""

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from rl_platform.base.errors import IntegrityError, UserError
from rl_platform.env_adapters.registry import agent_spaces
from rl_platform.rllib.algorithm_state import state_for_rllib
from rl_platform.rllib.facts import RunFacts
from rl_platform.run.health import HEALTH_META_KEY
from rl_platform.run.sinks import METRICS_ROW_META_KEY
from rl_platform.run.stopping import reached_stop
from rl_platform.spec import ExperimentSpec
from rl_platform.spec.sections import StopSpec
from rl_platform.storage.checkpoints import (
    META_FILE,
    CheckpointStore,
    LoadedCheckpoint,
    load_checkpoint,
)
from rl_platform.storage.layout import CHECKPOINTS_DIR
from rl_platform.storage.run_dir import existing_run_dir
from rl_platform.storage.saved_spec import (
    read_saved_spec_tree,
    saved_spec_path,
    spec_tree,
    write_resumed_spec,
)
from rl_platform.utils.atomic import write_text_atomic
from rl_platform.utils.secrets import MASK

RESUMES_FILE = "resumes.jsonl"


@dataclass(frozen=True)
class ResumeTarget:
    run_dir: Path
    checkpoint: Path | None
    """A checkpoint named explicitly; None: the run's latest."""


def resume_target(path: str | Path) -> ResumeTarget:
    """A run folder, or a checkpoint folder `<run>/checkpoints/iter_N` inside one."""
    path = Path(path)
    if (path / META_FILE).is_file() and path.parent.name == CHECKPOINTS_DIR:
        return ResumeTarget(run_dir=existing_run_dir(path.parent.parent), checkpoint=path)
    return ResumeTarget(run_dir=existing_run_dir(path), checkpoint=None)


def checkpoint_to_resume(target: ResumeTarget, *, force: bool = False) -> LoadedCheckpoint:
    """The verified checkpoint to resume from; `UserError`/`IntegrityError` when there is none,
    when its observation filter's state is not plain float arrays (RLlib would unpickle it), or
    (without `force`) when it holds a policy saved while its entropy had collapsed."""
    loaded = _verified_checkpoint(target)
    state_for_rllib(loaded)  # refused here, before any file is written or Ray starts
    flagged = loaded.meta.get(HEALTH_META_KEY)
    if flagged and not force:
        reason = flagged.get("reason", "collapsed") if isinstance(flagged, dict) else flagged
        raise UserError(
            f"--resume: {loaded.path} was saved while the policy had collapsed ({reason}); "
            "resume from an earlier checkpoint (`--resume RUN/checkpoints/iter_N`), or pass "
            "--force to continue from it anyway"
        )
    return loaded


def _verified_checkpoint(target: ResumeTarget) -> LoadedCheckpoint:
    if target.checkpoint is not None:
        return load_checkpoint(target.checkpoint)
    store = CheckpointStore(target.run_dir / CHECKPOINTS_DIR)
    latest = store.latest()
    if latest is None:
        raise UserError(
            f"--resume {target.run_dir}: no complete checkpoint to resume from (a run killed "
            "before its first checkpoint); start a new run instead"
        )
    try:
        return load_checkpoint(latest)
    except IntegrityError as exc:
        intact = store.latest_intact()
        hint = (
            f"; the newest intact one is {intact.path.name}: resume from it with "
            f"`--resume {intact.path}`"
            if intact is not None
            else "; no other checkpoint verifies either"
        )
        raise IntegrityError(f"{exc}{hint}") from None


def stop_reached_at(checkpoint: LoadedCheckpoint, stop: StopSpec) -> str | None:
    """The stop condition the checkpoint's iteration already meets, or None to train on. Its
    metrics row travels in the checkpoint (`METRICS_ROW_META_KEY`), so this holds also when
    the kill came before the row reached `metrics.jsonl`; the counters are the checkpoint's."""
    row = dict(checkpoint.meta.get(METRICS_ROW_META_KEY) or {})
    row["iteration"] = int(checkpoint.meta["iteration"])
    row["env_steps"] = int(checkpoint.meta.get("env_steps") or row.get("env_steps") or 0)
    return reached_stop(stop, row)


SHAPE_KEYS = (
    "algo",
    "env.id",
    "env.wrappers",
    "env.hide",
    "env.observation_filter",
    "model",
    "league.slots",
    "league.roles",
    "league.scripted",
)
"""What fixes a checkpoint's modules and tensor shapes: a resume that changes any of these cannot
load it. RLlib would say so only after Ray started, building every module, with torch's
"Error(s) in loading state_dict for ..." (or leave a league module out); `env.kwargs` count
where they change an agent's observation or action space (`_space_changes`)."""


def _at(tree: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        tree = tree.get(key) if isinstance(tree, dict) else None
    return tree


def check_checkpoint_fits(run_dir: Path, spec: ExperimentSpec, *, facts: RunFacts) -> None:
    """`UserError` naming each key of `SHAPE_KEYS` (and each `env.kwargs` key that changes a
    space) where `spec` differs from the run's own `spec.yaml`, with both values: its
    checkpoint holds tensors of the other shapes. Before Ray starts and before any file."""
    original = read_saved_spec_tree(run_dir)
    if original is None:
        return
    resumed = spec_tree(spec)
    differing: dict[str, list[Any]] = {}
    for key in SHAPE_KEYS:
        differing |= _changes(_at(original, key), _at(resumed, key), f"{key}.")
    if not differing:
        differing = _space_changes(original, resumed, spec, facts)
    if differing:
        shown = "; ".join(
            f"{key} {_short(old)} (the spec says {_short(new)})"
            for key, (old, new) in differing.items()
        )
        raise UserError(
            f"--resume: {run_dir} was trained with {shown}; its checkpoint holds tensors of "
            f"those shapes: resume with the run's own spec (`rlp train "
            f"{saved_spec_path(run_dir)} --resume {run_dir}`), or start a new run"
        )


def _space_changes(
    original: Any, resumed: Any, spec: ExperimentSpec, facts: RunFacts
) -> dict[str, list[Any]]:
    """The changed `env.kwargs` keys when the run's own kwargs give an agent another space
    (a corridor's `length`); none when only rewards or limits changed."""
    changed = _changes(_at(original, "env.kwargs"), _at(resumed, "env.kwargs"), "env.kwargs.")
    if not changed:
        return {}
    # Masked secrets (`***`) in the saved spec: the spec's own values, which the env needs.
    kwargs = _unmasked(_at(original, "env.kwargs") or {}, spec.env.kwargs)
    try:
        before = agent_spaces(spec.env.id, spec.env.wrappers, kwargs, multi_agent=facts.multi_agent)
    except Exception:  # the old kwargs no longer build an env: `_restore` still checks
        return {}
    spaces = {
        f"{kind} space" + (f" of {agent}" if facts.multi_agent else ""): [
            before.get(agent, (None, None))[index],
            pair[index],
        ]
        for agent, pair in facts.agent_spaces.items()
        for index, kind in enumerate(("observation", "action"))
        if before.get(agent, (None, None))[index] != pair[index]
    }
    return changed | spaces if spaces else {}


def _unmasked(saved: dict[str, Any], current: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in saved.items():
        if isinstance(value, dict) and isinstance(current.get(key), Mapping):
            out[key] = _unmasked(value, current[key])
        else:
            out[key] = current.get(key, value) if value == MASK else value
    return out


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _changes(old: Any, new: Any, prefix: str = "") -> dict[str, list[Any]]:
    if isinstance(old, dict) and isinstance(new, dict):
        out: dict[str, list[Any]] = {}
        for key in sorted(set(old) | set(new), key=str):
            out |= _changes(old.get(key), new.get(key), f"{prefix}{key}.")
        return out
    return {} if old == new else {prefix.rstrip("."): [old, new]}


def record_resumed_spec(run_dir: Path, spec: ExperimentSpec, checkpoint: Path) -> Path | None:
    """Write the resumed spec beside the original when it differs; returns its path."""
    # Both sides as written to disk (secrets masked), so a masked secret is no change.
    changed = _changes(read_saved_spec_tree(run_dir), spec_tree(spec))
    if not changed:
        return None
    resumes = run_dir / RESUMES_FILE
    number = 1 + (len(resumes.read_text().splitlines()) if resumes.is_file() else 0)
    path = write_resumed_spec(run_dir, spec, number=number)
    entry = {"resume": number, "at": time.time(), "checkpoint": checkpoint.name, "changed": changed}
    previous = resumes.read_text() if resumes.is_file() else ""
    write_text_atomic(resumes, previous + json.dumps(entry, default=str) + "\n")
    logger.info("resumed with a changed spec ({}): {}", path.name, ", ".join(changed))
    return path
